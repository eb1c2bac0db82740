package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"lookout/internal/client"
	"lookout/internal/manifest"
)

// resolveMonitor finds the monitor ref names: a uuid, or a name. Ping
// monitors and checks are separate name spaces (every kind of check shares
// the checks'), so a name means at most one ping monitor and one
// check; kind picks one of them, and without it a name both have is
// refused (a usage error naming the two).
func resolveMonitor(ctx context.Context, c *client.Manage, ref, kind string) (*manifest.Manifest, error) {
	if kind != "" && !manifest.KnownKind(kind) {
		return nil, usageError{fmt.Sprintf("--kind %q: want ping, http_check, ssl_check, tcp_check or dns_check", kind)}
	}
	if _, err := uuid.Parse(ref); err == nil {
		m, err := c.GetMonitor(ctx, ref)
		var ae *client.APIError
		switch {
		case err == nil && (kind == "" || m.Kind == kind):
			return m, nil
		case err != nil && !(errors.As(err, &ae) && ae.Status == http.StatusNotFound):
			return nil, err
		}
		// A 404: a ping monitor's name may look like a uuid.
	}
	all, err := c.AllMonitors(ctx, kind)
	if err != nil {
		return nil, err
	}
	var found []manifest.Manifest
	for _, m := range all {
		if m.Name == ref {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 0:
		what := "monitor"
		if kind != "" {
			what = kind
		}
		return nil, &client.APIError{Status: http.StatusNotFound, Code: "not_found",
			Message: fmt.Sprintf("no %s named %q (lookout monitors list shows the account's monitors)", what, ref)}
	case 1:
		return &found[0], nil
	}
	var kinds []string
	for _, m := range found {
		kinds = append(kinds, m.Kind+" ("+m.UUID+")")
	}
	return nil, usageError{fmt.Sprintf("%q names %d monitors: %s; add --kind %s", ref, len(found), strings.Join(kinds, " and "), found[0].Kind)}
}

func setupGet(fs *flag.FlagSet) func(context.Context, *client.Manage, []string, manageEnv) error {
	kind := kindFlag(fs)
	asJSON := fs.Bool("json", false, "print the API's answer (the manifest with its status) as JSON")
	return func(ctx context.Context, c *client.Manage, args []string, env manageEnv) error {
		found, err := resolveMonitor(ctx, c, args[0], *kind)
		if err != nil {
			return err
		}
		m, err := c.Monitor(ctx, found.UUID)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.stdout, m)
		}
		printStatus(env.stdout, m, env.clock())
		fmt.Fprintln(env.stdout)
		return printJSON(env.stdout, m.Manifest)
	}
}

// printStatus prints a monitor's kind, name and uuid, then its status a
// line a field: times in UTC with how long ago or how soon, the fields of
// the status this client does not know by their JSON names.
func printStatus(w io.Writer, m *client.MonitorWithStatus, now time.Time) {
	fmt.Fprintf(w, "%s %s (%s)\n", m.Kind, m.Name, m.UUID)
	if !m.Enabled {
		fmt.Fprintf(w, "  %-16s %s\n", "enabled:", "false (its pings are recorded; nothing is judged or alerted)")
	}
	s := m.Status
	if s == nil {
		return
	}
	line := func(label, value string) { fmt.Fprintf(w, "  %-16s %s\n", label+":", value) }
	line("state", s.State)
	at := func(label string, t *time.Time, none string) {
		if t != nil {
			line(label, when(*t, now))
		} else if none != "" {
			line(label, none)
		}
	}
	if m.Kind == manifest.KindPing {
		at("last ping", s.LastPingAt, "never")
		at("next expected", s.NextExpectedAt, "")
		at("next deadline", s.NextDeadlineAt, "none (no run open, no expected interval)")
		if s.LastDuration != nil {
			line("last duration", durationText(*s.LastDuration))
		}
	} else {
		at("last execution", s.LastExecutionAt, "never")
		if s.LastStatus != nil {
			line("last status", *s.LastStatus)
		}
		at("next run", s.NextRunAt, "")
		if s.DaysLeft != nil {
			line("days left", fmt.Sprint(*s.DaysLeft))
		}
	}
	keys := make([]string, 0, len(s.Other))
	for k := range s.Other {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		label := strings.ReplaceAll(k, "_", " ")
		var t time.Time
		var str string
		switch {
		case json.Unmarshal(s.Other[k], &t) == nil:
			line(label, when(t, now))
		case json.Unmarshal(s.Other[k], &str) == nil:
			line(label, str)
		default:
			line(label, string(s.Other[k]))
		}
	}
}

// when is t in UTC with how long ago or how soon it is.
func when(t, now time.Time) string {
	d := t.Sub(now)
	rel := "now"
	switch {
	case d >= time.Second:
		rel = "in " + roughly(d)
	case d <= -time.Second:
		rel = roughly(-d) + " ago"
	}
	return t.UTC().Format(time.RFC3339) + " (" + rel + ")"
}

// roughly is d rounded to the unit that matters: 45s, 12m, 3h20m, 4d.
func roughly(d time.Duration) string {
	if d >= time.Minute {
		d = d.Round(time.Minute)
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}
