package channel

import (
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Fact is one labelled detail of an alert, for the field lists of chat
// messages (Slack section fields, Discord embed fields, Teams facts).
type Fact struct {
	Name, Value string
}

// Facts lists what a chat message shows about a beside its title, in
// order: the monitor (display name with the name in parentheses, or the
// name), its project, the alert type and, from the event, host, exit
// code and duration. Empty details are left out. Values are plain text:
// each channel escapes them for its markup.
func Facts(a Alert) []Fact {
	m := a.Monitor
	monitor := m.Name
	if m.DisplayName != "" && m.DisplayName != m.Name {
		monitor = m.DisplayName + " (" + m.Name + ")"
	}
	facts := []Fact{{"Monitor", monitor}}
	if m.Project != "" {
		facts = append(facts, Fact{"Project", m.Project})
	}
	facts = append(facts, Fact{"Alert", a.Type})
	if len(a.Regions) > 0 {
		facts = append(facts, Fact{"Regions", strings.Join(a.Regions, ", ")})
	}
	if e := a.Event; e != nil {
		if e.Host != "" {
			facts = append(facts, Fact{"Host", e.Host})
		}
		if e.ExitCode != nil {
			facts = append(facts, Fact{"Exit code", strconv.FormatInt(*e.ExitCode, 10)})
		}
		if e.Duration != nil {
			d := time.Duration(*e.Duration * float64(time.Second)).Round(time.Millisecond)
			facts = append(facts, Fact{"Duration", d.String()})
		}
	}
	return facts
}

// Message returns the message of a's event, or "" when it has none.
func Message(a Alert) string {
	if a.Event == nil {
		return ""
	}
	return a.Event.Message
}

// Fit returns enc(s) in at most limit characters (runes): when enc(s) is
// longer, s is cut as little as needed and ends in "…" before it is
// encoded. enc (escaping, code fences) may be nil. Only when enc adds
// more than limit by itself is the result longer.
func Fit(s string, limit int, enc func(string) string) string {
	if enc == nil {
		enc = func(s string) string { return s }
	}
	if out := enc(s); utf8.RuneCountInString(out) <= limit {
		return out
	}
	runes := []rune(s)
	cut := func(n int) string { return enc(string(runes[:n]) + "…") }
	// The longest prefix that fits, by binary search: encoding only
	// grows with the input.
	n := sort.Search(len(runes), func(n int) bool { return utf8.RuneCountInString(cut(n)) > limit }) - 1
	return cut(max(n, 0))
}
