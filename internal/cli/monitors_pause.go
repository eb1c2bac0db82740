package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"lookout/internal/client"
)

// setupPause is lookout monitors pause NAME: the monitor's alerts held
// (runtime state, not its manifest) until it is resumed or --for has
// passed.
func setupPause(fs *flag.FlagSet) func(context.Context, *client.Manage, []string, manageEnv) error {
	kind := kindFlag(fs)
	forDur := fs.Duration("for", 0, "end the pause by itself after this long (such as 2h or 30m; at most 366 days); without it, until resumed")
	reason := fs.String("reason", "", "why, shown with the pause (at most 255 characters)")
	return func(ctx context.Context, c *client.Manage, args []string, env manageEnv) error {
		if *forDur < 0 {
			return usageError{fmt.Sprintf("monitors pause: --for must be positive, got %v", *forDur)}
		}
		m, err := resolveMonitor(ctx, c, args[0], *kind)
		if err != nil {
			return err
		}
		var until time.Time
		if *forDur > 0 {
			until = env.clock().Add(*forDur)
		}
		st, err := c.PauseMonitor(ctx, m.UUID, until, *reason)
		if err != nil {
			return err
		}
		if st.Status != nil && st.Status.PausedUntil != nil {
			_, err = fmt.Fprintf(env.stdout, "Paused %s %s (%s) until %s.\n", st.Kind, st.Name, st.UUID, st.Status.PausedUntil.UTC().Format(time.RFC3339))
			return err
		}
		_, err = fmt.Fprintf(env.stdout, "Paused %s %s (%s) until resumed.\n", st.Kind, st.Name, st.UUID)
		return err
	}
}

// setupResume is lookout monitors resume NAME: a paused monitor judged
// afresh now (a ping monitor expects its next run from now; a failure held
// while paused that still stands is alerted once).
func setupResume(fs *flag.FlagSet) func(context.Context, *client.Manage, []string, manageEnv) error {
	kind := kindFlag(fs)
	return func(ctx context.Context, c *client.Manage, args []string, env manageEnv) error {
		m, err := resolveMonitor(ctx, c, args[0], *kind)
		if err != nil {
			return err
		}
		st, err := c.ResumeMonitor(ctx, m.UUID)
		if err != nil {
			return err
		}
		state := ""
		if st.Status != nil {
			state = st.Status.State
		}
		_, err = fmt.Fprintf(env.stdout, "Resumed %s %s (%s): %s.\n", st.Kind, st.Name, st.UUID, state)
		return err
	}
}
