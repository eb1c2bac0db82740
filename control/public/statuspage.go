package public

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// The status page: GET /status/{slug}, an account's published page (its
// title, and each matched monitor's name, status and a bar of daily uptime
// for the last 90 days), server-rendered with its CSS inline: no script,
// nothing loaded from elsewhere.

//go:embed templates/status.html templates/status.css
var templateFS embed.FS

// maxStatusMonitors bounds the monitors one page shows (in name order);
// the rest are counted ("And N more").
const maxStatusMonitors = 200

// pages is the parsed template, its CSS and the Content-Security-Policy
// that allows exactly that CSS.
type pages struct {
	status *template.Template
	css    template.CSS
	csp    string
}

func parsePages() (*pages, error) {
	t, err := template.ParseFS(templateFS, "templates/status.html")
	if err != nil {
		return nil, fmt.Errorf("public: parse the status page: %w", err)
	}
	css, err := templateFS.ReadFile("templates/status.css")
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(css)
	csp := "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'"
	return &pages{status: t, css: template.CSS(css), csp: csp}, nil
}

type statusView struct {
	Title, Overall, OverallClass string
	CSS                          template.CSS
	Rows                         []statusRow
	More                         int
	// Days are the bars of a monitor, Oldest how many days ago the first
	// one is (today is the last).
	Days, Oldest int
	Updated      string
}

type statusRow struct {
	Name, Status, Class, Uptime string
	Bars                        []dayBar
}

type dayBar struct{ Class, Title string }

// statusClasses are the pills' colours.
var statusClasses = map[string]string{statusUp: "green", statusDown: "red", statusLate: "amber"}

// statusPage answers GET /status/{slug}.
func (p *Public) statusPage(r *http.Request, nowMs int64) answer {
	acct, page, err := p.state.StatusPageBySlug(r.PathValue("slug"))
	if errors.Is(err, state.ErrNotFound) || (err == nil && !page.GetEnabled()) {
		return notFound(contentHTML)
	}
	if err != nil {
		return p.internal("status page", err)
	}
	monitors, err := p.state.Monitors(acct)
	if err != nil {
		return p.internal("status page", err)
	}
	shown := monitors[:0:0]
	for _, m := range monitors {
		if matches(page.GetMatch(), m) {
			shown = append(shown, m)
		}
	}
	slices.SortStableFunc(shown, func(a, b *statev1.Monitor) int {
		return strings.Compare(strings.ToLower(displayName(a)), strings.ToLower(displayName(b)))
	})
	v := &statusView{Title: page.GetTitle(), CSS: p.pages.css, Days: state.UptimeDays, Oldest: state.UptimeDays - 1,
		Updated: time.UnixMilli(nowMs).UTC().Format("2006-01-02 15:04")}
	if len(shown) > maxStatusMonitors {
		v.More, shown = len(shown)-maxStatusMonitors, shown[:maxStatusMonitors]
	}
	ids := make([]string, len(shown))
	for i, m := range shown {
		ids[i] = m.GetUuid()
	}
	uptimes, err := p.state.Uptimes(ids)
	if err != nil {
		return p.internal("status page", err)
	}
	counts := map[string]int{}
	for _, m := range shown {
		unknown, err := p.state.UnknownSince(m)
		if err != nil {
			return p.internal("status page", err)
		}
		st, err := p.statusOf(m, unknown)
		if err != nil {
			return p.internal("status page", err)
		}
		counts[st]++
		up, bars := dailyBars(uptimes[m.GetUuid()], nowMs, unknown)
		v.Rows = append(v.Rows, statusRow{Name: displayName(m), Status: st, Class: orGray(statusClasses[st]), Uptime: up, Bars: bars})
	}
	v.Overall, v.OverallClass = overall(counts)
	var buf bytes.Buffer
	if err := p.pages.status.Execute(&buf, v); err != nil {
		return p.internal("status page", err)
	}
	return answer{status: http.StatusOK, contentType: contentHTML, body: buf.Bytes()}
}

// matches tells whether m is on a page of match: an empty match is every
// monitor; else m's uuid, one of its tags or its project is listed.
func matches(match *raftv1.StatusPageMatch, m *statev1.Monitor) bool {
	if len(match.GetMonitors())+len(match.GetTags())+len(match.GetProjects()) == 0 {
		return true
	}
	if slices.Contains(match.GetMonitors(), m.GetUuid()) || (m.GetProject() != "" && slices.Contains(match.GetProjects(), m.GetProject())) {
		return true
	}
	for _, t := range m.GetTags() {
		if slices.Contains(match.GetTags(), t) {
			return true
		}
	}
	return false
}

func displayName(m *statev1.Monitor) string {
	if d := m.GetDisplayName(); d != "" {
		return d
	}
	return m.GetName()
}

func orGray(class string) string {
	if class == "" {
		return "gray"
	}
	return class
}

// overall is the page's headline from the count of each status.
func overall(counts map[string]int) (string, string) {
	switch down, late := counts[statusDown], counts[statusLate]; {
	case down > 0:
		return plural(down, "monitor is down", "monitors are down"), "red"
	case late > 0:
		return plural(late, "monitor is late", "monitors are late"), "amber"
	case counts[statusUp] > 0:
		return "All systems operational", "green"
	}
	return "No status yet", "gray"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// dailyBars is the uptime over the page's days ("99.95% up, 90 days", or
// "no data") and a bar per day.
func dailyBars(u *statev1.Uptime, nowMs, unknownSince int64) (string, []dayBar) {
	days := state.UptimeDaily(u, nowMs, state.UptimeDays, unknownSince)
	bars := make([]dayBar, len(days))
	var total state.UptimeRatio
	first := time.UnixMilli(nowMs).UTC().Truncate(24*time.Hour).AddDate(0, 0, 1-len(days))
	for i, d := range days {
		total.UpMs += d.UpMs
		total.DownMs += d.DownMs
		date := first.AddDate(0, 0, i).Format("2006-01-02")
		switch {
		case !d.Known():
			bars[i] = dayBar{Class: "none", Title: date + ": no data"}
		case d.DownMs == 0:
			bars[i] = dayBar{Class: "ok", Title: date + ": 100% up"}
		default:
			class := "major"
			if d.Percent() >= 99 {
				class = "minor"
			}
			bars[i] = dayBar{Class: class, Title: fmt.Sprintf("%s: %s up, down %s", date, percent(d), short(d.DownMs))}
		}
	}
	if !total.Known() {
		return "no data yet", bars
	}
	return fmt.Sprintf("%s up, %d days", percent(total), len(days)), bars
}

// percent formats an uptime with two decimals, never rounding up to 100%
// while something was down.
func percent(r state.UptimeRatio) string {
	p := r.Percent()
	if r.DownMs > 0 && p > 99.99 {
		return "99.99%"
	}
	return fmt.Sprintf("%.2f%%", p)
}

// short is ms as "3h 5m", "12m", "40s".
func short(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}
