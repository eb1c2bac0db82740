package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"lookout/internal/client"
	"lookout/internal/manifest"
)

// runMonitorsPause runs lookout monitors pause|resume NAME: a monitor's
// alerts held (runtime state, not its manifest) or judged afresh. NAME is
// a monitor's name or uuid; --kind tells a ping from a check of the same
// name.
func runMonitorsPause(ctx context.Context, sub string, args []string, env manageEnv) error {
	name := "monitors " + sub
	fs, conn, err := manageFlags(name, env)
	if err != nil {
		return err
	}
	kind := fs.String("kind", "", "the monitor's kind, when a ping monitor and a check share NAME: ping, http_check or ssl_check")
	var forDur *time.Duration
	var reason *string
	synopsis := "resume NAME [--kind K]\n\nResume a paused monitor: it is judged afresh now (a ping monitor expects its next\nrun from now; a failure held while paused that still stands is alerted once)."
	if sub == "pause" {
		forDur = fs.Duration("for", 0, "end the pause by itself after this long (such as 2h or 30m; at most 366 days); without it, until resumed")
		reason = fs.String("reason", "", "why, shown with the pause (at most 255 characters)")
		synopsis = "pause NAME [--for 2h] [--reason TEXT] [--kind K]\n\nPause a monitor: it records its pings and executions but sends no alert until\nit is resumed or --for has passed. Runtime state: apply and export ignore it."
	}
	usage := "Usage: lookout monitors " + synopsis + "\n\nFlags:\n"
	positional, done, err := parseManage(fs, args, name, usage, env)
	if done || err != nil {
		return err
	}
	if len(positional) != 1 {
		return usageError{fmt.Sprintf("%s: want 1 argument NAME (a monitor's name or uuid), got %q (see lookout %s -h)", name, positional, name)}
	}
	if forDur != nil && *forDur < 0 {
		return usageError{fmt.Sprintf("%s: --for must be positive, got %v", name, *forDur)}
	}
	c, err := conn.client()
	if err != nil {
		return err
	}
	id, err := resolveMonitor(ctx, c, positional[0], *kind)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var m *client.MonitorState
	if sub == "pause" {
		var until time.Time
		if *forDur > 0 {
			until = time.Now().Add(*forDur)
		}
		m, err = c.PauseMonitor(ctx, id, until, *reason)
	} else {
		m, err = c.ResumeMonitor(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	switch {
	case sub == "resume":
		_, err = fmt.Fprintf(env.stdout, "Resumed %s %s (%s): %s.\n", m.Kind, m.Name, m.UUID, m.Status.State)
	case m.Status.PausedUntil != nil:
		_, err = fmt.Fprintf(env.stdout, "Paused %s %s (%s) until %s.\n", m.Kind, m.Name, m.UUID, m.Status.PausedUntil.UTC().Format(time.RFC3339))
	default:
		_, err = fmt.Fprintf(env.stdout, "Paused %s %s (%s) until resumed.\n", m.Kind, m.Name, m.UUID)
	}
	return err
}

// resolveMonitor finds the uuid of the monitor called ref (or with uuid
// ref) of kind (any kind when empty).
func resolveMonitor(ctx context.Context, c *client.Manage, ref, kind string) (string, error) {
	if _, err := uuid.Parse(ref); err == nil && len(ref) == 36 {
		return ref, nil
	}
	switch kind {
	case "", manifest.KindPing, manifest.KindHTTP, manifest.KindSSL:
	default:
		return "", usageError{fmt.Sprintf("--kind must be ping, http_check or ssl_check, got %q", kind)}
	}
	ms, err := c.AllMonitors(ctx, kind)
	if err != nil {
		return "", err
	}
	var found []manifest.Manifest
	for _, m := range ms {
		if m.Name == ref {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no monitor named %q", ref)
	case 1:
		return found[0].UUID, nil
	}
	var kinds []string
	for _, m := range found {
		kinds = append(kinds, m.Kind)
	}
	return "", usageError{fmt.Sprintf("%q names a %s: add --kind", ref, strings.Join(kinds, " and a "))}
}
