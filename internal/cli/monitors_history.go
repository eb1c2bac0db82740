package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"lookout/internal/client"
	"lookout/internal/manifest"
)

// defaultHistoryLimit is how many events or executions lookout monitors
// events and executions show unless --limit says otherwise.
const defaultHistoryLimit = 20

// historyFlags are the flags of events and executions.
type historyFlags struct {
	kind, before *string
	limit        *int
	asJSON       *bool
}

// newHistoryFlags adds the flags of events and executions.
func newHistoryFlags(fs *flag.FlagSet, what string) historyFlags {
	return historyFlags{
		kind:   kindFlag(fs),
		limit:  fs.Int("limit", defaultHistoryLimit, "how many of the newest "+what+", 1 to 1000"),
		before: fs.String("before", "", "older "+what+": the cursor the previous page ended with"),
		asJSON: fs.Bool("json", false, `print {"`+what+`": [...], "next_before": ...} as the API answers it, instead of a table`),
	}
}

// printOlder says, after a table, how to read the page before it.
func printOlder(env manageEnv, sub string, m *manifest.Manifest, next string) {
	if next != "" {
		fmt.Fprintf(env.stderr, "older: lookout monitors %s %s --kind %s --before %s\n", sub, m.Name, m.Kind, next)
	}
}

func checkLimit(limit int) error {
	if limit < 1 || limit > 1000 {
		return usageError{fmt.Sprintf("--limit %d: want 1 to 1000", limit)}
	}
	return nil
}

func setupEvents(fs *flag.FlagSet) func(context.Context, *client.Manage, []string, manageEnv) error {
	f := newHistoryFlags(fs, "events")
	return func(ctx context.Context, c *client.Manage, args []string, env manageEnv) error {
		if err := checkLimit(*f.limit); err != nil {
			return err
		}
		m, err := resolveMonitor(ctx, c, args[0], *f.kind)
		if err != nil {
			return err
		}
		evs, next, err := c.EventsBefore(ctx, m.UUID, *f.limit, *f.before)
		if err != nil {
			return err
		}
		if *f.asJSON {
			return printJSON(env.stdout, history("events", evs, next))
		}
		defer printOlder(env, "events", m, next)
		if len(evs) == 0 {
			_, err := fmt.Fprintf(env.stdout, "No events for %s %s yet.\n", m.Kind, m.Name)
			return err
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tEVENT\tDURATION\tEXIT\tHOST\tMESSAGE")
		for _, e := range evs {
			what := e.EventType
			switch {
			case e.EventType == "ping":
				what = e.Status
			case e.State != "":
				what += " " + e.State
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", time.Unix(e.Timestamp, 0).UTC().Format(time.RFC3339), what,
				orDash(e.Duration != nil, func() string { return durationText(*e.Duration) }),
				orDash(e.ExitCode != nil, func() string { return strconv.FormatInt(*e.ExitCode, 10) }),
				orDash(e.Host != "", func() string { return e.Host }),
				orDash(e.Message != "", func() string { return oneLine(e.Message, 60) }))
		}
		return tw.Flush()
	}
}

func setupExecutions(fs *flag.FlagSet) func(context.Context, *client.Manage, []string, manageEnv) error {
	f := newHistoryFlags(fs, "executions")
	return func(ctx context.Context, c *client.Manage, args []string, env manageEnv) error {
		if err := checkLimit(*f.limit); err != nil {
			return err
		}
		m, err := resolveMonitor(ctx, c, args[0], *f.kind)
		if err != nil {
			return err
		}
		if m.Kind == manifest.KindPing {
			return usageError{fmt.Sprintf("%s is a ping monitor: it has events, not executions (lookout monitors events %s)", m.Name, m.Name)}
		}
		execs, next, err := c.ExecutionsBefore(ctx, m.UUID, *f.limit, *f.before)
		if err != nil {
			return err
		}
		if *f.asJSON {
			return printJSON(env.stdout, history("executions", execs, next))
		}
		defer printOlder(env, "executions", m, next)
		if len(execs) == 0 {
			_, err := fmt.Fprintf(env.stdout, "No executions for %s %s yet.\n", m.Kind, m.Name)
			return err
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SLOT\tSTATUS\tREGION\tATTEMPTS\tDURATION\tRESULT")
		for _, e := range execs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%dms\t%s\n", e.Slot.UTC().Format(time.RFC3339), e.Status,
				e.Region+orEmpty(e.Agent != "", " ("+e.Agent+")"), e.Attempts, e.DurationMs, executionResult(e))
		}
		return tw.Flush()
	}
}

// executionResult says what an execution found: its error, the HTTP
// status, or the certificate's days left.
func executionResult(e client.Execution) string {
	switch {
	case e.Error != "":
		return oneLine(e.Error, 80)
	case e.HTTP != nil:
		return fmt.Sprintf("HTTP %d, %d bytes", e.HTTP.StatusCode, e.HTTP.ResponseBytes)
	case e.SSL != nil:
		return fmt.Sprintf("%d days left", e.SSL.DaysLeft)
	}
	return "-"
}

// durationText is a run's duration in seconds as people read it: "9ms",
// "1.25s", "1h2m5s".
func durationText(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second))
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// orDash is value() when ok, else "-".
func orDash(ok bool, value func() string) string {
	if !ok {
		return "-"
	}
	return value()
}

func orEmpty(ok bool, s string) string {
	if !ok {
		return ""
	}
	return s
}

// oneLine is the first line of s, cut to n characters.
func oneLine(s string, n int) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		s, cut = string(r[:n]), true
	}
	if cut {
		s += "…"
	}
	return s
}

// history is a page of events or executions as --json prints it, with the
// cursor of the page before it when there is one.
func history(what string, page any, next string) map[string]any {
	out := map[string]any{what: page}
	if next != "" {
		out["next_before"] = next
	}
	return out
}
