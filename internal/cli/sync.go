package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"lookout/internal/client"
	"lookout/internal/crontab"
	"lookout/internal/manifest"
)

const syncUsage = `Usage: lookout sync [--crontab FILE] [--system] [--dry-run | --rewrite | --write] [flags]

Turn a crontab into ping monitors: one per job, with the job's schedule and
time zone (CRON_TZ= or TZ= above it, else --timezone, else this host's
zone). A job is named by a "# lookout: NAME" comment on the line above it,
by the lookout exec that already wraps it, or by a slug of its command
(stable, unique in the crontab). The monitors are applied through the
Management API as lookout apply does, with the same plan and exit status
(--dry-run: exit 2 when it would change something). A monitor that exists
keeps its other fields (tags, group, grace, ...): sync sets its schedule and
zone; a new one gets --timeout and --grace. Lines that are not jobs it can
monitor (a bad schedule, @reboot) are reported and left alone.

The crontab is "crontab -l" unless --crontab FILE is given (--system: a
system crontab such as /etc/crontab, with a user column).

  --rewrite  print the crontab with each job wrapped as
             "lookout exec NAME -- COMMAND" (a wrapped job is not wrapped
             again); contacts nothing
  --write    apply, then install the rewritten crontab ("crontab -", or
             FILE with --crontab) after saving the current one to --backup

With --ingest-key (env LOOKOUT_INGEST_KEY) the rewritten crontab also sets
LOOKOUT_ADDR and LOOKOUT_INGEST_KEY when it does not, so lookout exec can
report. --addr and --management-key also read LOOKOUT_ADDR and
LOOKOUT_MANAGEMENT_KEY.

Flags:
`

// syncFlags are lookout sync's own flags.
type syncFlags struct {
	file, zone, backup, lookout, ingestKey string
	system, dryRun, rewrite, write         bool
	timeout, grace                         int64
}

// runSync runs lookout sync with the process environment.
func runSync(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runSyncEnv(ctx, args, processManageEnv(getenv, stdout, stderr))
}

func runSyncEnv(ctx context.Context, args []string, env manageEnv) error {
	fs, conn, err := manageFlags("sync", env)
	if err != nil {
		return err
	}
	var f syncFlags
	fs.StringVar(&f.file, "crontab", "", `the crontab to read (default: "crontab -l")`)
	fs.BoolVar(&f.system, "system", false, "the crontab has a user column (/etc/crontab, /etc/cron.d/*)")
	fs.StringVar(&f.zone, "timezone", "", "the zone of jobs without CRON_TZ= or TZ= (default: this host's)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "only show what would change; write nothing")
	fs.BoolVar(&f.rewrite, "rewrite", false, "print the crontab with each job wrapped in lookout exec; contact nothing")
	fs.BoolVar(&f.write, "write", false, "apply, then install the rewritten crontab (after a backup)")
	fs.StringVar(&f.backup, "backup", "", "where --write saves the current crontab (default: beside FILE, or in the home directory)")
	fs.StringVar(&f.lookout, "lookout", "", "the lookout binary the rewritten jobs run (default: this one)")
	fs.StringVar(&f.ingestKey, "ingest-key", "", "the ingest key the rewritten crontab sets for lookout exec (env LOOKOUT_INGEST_KEY)")
	fs.Int64Var(&f.timeout, "timeout", 3600, "timeout_seconds of the monitors sync creates")
	fs.Int64Var(&f.grace, "grace", 300, "grace_seconds of the monitors sync creates")
	positional, done, err := parseManage(fs, args, "sync", syncUsage, env)
	if done || err != nil {
		return err
	}
	if f.ingestKey == "" {
		f.ingestKey = env.getenv("LOOKOUT_INGEST_KEY") // not the flag's default: -h would print it
	}
	switch {
	case len(positional) != 0:
		return usageError{fmt.Sprintf("sync: unexpected argument(s) %q (see lookout sync -h)", positional)}
	case f.rewrite && (f.write || f.dryRun), f.write && f.dryRun:
		return usageError{"sync: give one of --dry-run, --rewrite and --write"}
	}
	zone, err := syncZone(f.zone, env.getenv)
	if err != nil {
		return err
	}
	data, err := readCrontab(ctx, f.file)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	tab := crontab.Parse(data, crontab.Options{System: f.system, Zone: zone})
	for _, p := range tab.Problems() {
		fmt.Fprintf(env.stderr, "lookout sync: %s (left as it is)\n", p)
	}
	if f.rewrite {
		return printRewrite(env, tab, f, conn.addr)
	}
	c, err := conn.client()
	if err != nil {
		return err
	}
	bundle, err := syncBundle(ctx, c, tab.Jobs(), f)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	rep, err := c.ApplyBundle(ctx, bundle, f.dryRun)
	if err := reportApply(env, "sync", rep, err); err != nil || !f.write {
		return err
	}
	return installCrontab(ctx, env, tab, f, conn.addr, data)
}

// syncBundle is the bundle of the jobs' ping monitors. A monitor the
// account has keeps every field but schedule and zone (and loses
// expected_interval_seconds, which a schedule replaces).
func syncBundle(ctx context.Context, c *client.Manage, jobs []crontab.Job, f syncFlags) (manifest.Bundle, error) {
	existing, err := c.Export(ctx)
	if err != nil {
		return manifest.Bundle{}, err
	}
	have := map[string]manifest.Manifest{}
	for _, m := range existing.Monitors {
		if m.Kind == manifest.KindPing {
			have[m.Name] = m
		}
	}
	b := manifest.Bundle{ManifestVersion: manifest.Version, Monitors: []manifest.Manifest{}}
	for _, j := range jobs {
		m, ok := have[j.Name]
		if !ok {
			grace := f.grace
			m = manifest.Manifest{Kind: manifest.KindPing, Name: j.Name, Enabled: true, TimeoutSeconds: f.timeout, GraceSeconds: &grace}
		}
		m.Schedule, m.Timezone, m.ExpectedIntervalSeconds = j.Schedule, j.Zone, nil
		b.Monitors = append(b.Monitors, m)
	}
	return b, nil
}

// rewritten is the crontab with its jobs wrapped; the jobs that could not
// be are reported.
func rewritten(env manageEnv, tab *crontab.File, f syncFlags, addr string) (string, error) {
	bin := f.lookout
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("sync: the path of this binary (give --lookout): %w", err)
		}
		bin = exe
	}
	vars := map[string]string{}
	if f.ingestKey != "" {
		vars["LOOKOUT_ADDR"], vars["LOOKOUT_INGEST_KEY"] = addr, f.ingestKey
	}
	out, skipped := tab.Rewrite(crontab.RewriteOptions{Lookout: bin, Env: vars})
	for _, j := range skipped {
		fmt.Fprintf(env.stderr, "lookout sync: line %d: not wrapped: the command uses %% (cron's standard input); wrap it by hand as %s exec %s -- ...\n", j.Line, bin, j.Name)
	}
	return out, nil
}

func printRewrite(env manageEnv, tab *crontab.File, f syncFlags, addr string) error {
	out, err := rewritten(env, tab, f, addr)
	if err != nil {
		return err
	}
	_, err = io.WriteString(env.stdout, out)
	return err
}
