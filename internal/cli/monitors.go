package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"lookout/internal/client"
	"lookout/internal/manifest"
)

// manageEnv is what the Management API commands (export, apply, monitors)
// take from the process; tests give their own.
type manageEnv struct {
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
	// now is the clock relative times are shown against (nil: the
	// system's).
	now func() time.Time
}

// clock is the time now.
func (e manageEnv) clock() time.Time {
	if e.now == nil {
		return time.Now()
	}
	return e.now()
}

func processManageEnv(getenv func(string) string, stdout, stderr io.Writer) manageEnv {
	return manageEnv{getenv: getenv, stdin: os.Stdin, stdout: stdout, stderr: stderr}
}

// manageConn holds --addr and --management-key. Only these two read the
// environment (LOOKOUT_ADDR, LOOKOUT_MANAGEMENT_KEY): a LOOKOUT_CONFIRM or
// LOOKOUT_DRY_RUN must not change what a command does.
type manageConn struct{ addr, key, caFile string }

// manageFlags returns a flag set with the connection flags, already set
// from the environment; the command adds its own flags after.
func manageFlags(name string, env manageEnv) (*flag.FlagSet, *manageConn, error) {
	fs := newAdminFlagSet("lookout " + name)
	c := &manageConn{}
	fs.StringVar(&c.addr, "addr", defaultAdminAddr, "a control node's URL (env LOOKOUT_ADDR)")
	fs.StringVar(&c.key, "management-key", "", "the account's management key, mk_... (env LOOKOUT_MANAGEMENT_KEY)")
	fs.StringVar(&c.caFile, "ca-file", "", "PEM CA certificate(s) to verify an https:// node with, instead of the system roots (env LOOKOUT_CA_FILE)")
	if err := parseWithEnv(fs, nil, env.getenv); err != nil {
		return nil, nil, usageError{fmt.Sprintf("%s: %v", name, err)}
	}
	return fs, c, nil
}

// parseManage parses args (flags may follow the positional arguments) and
// returns the positional ones; done means -h printed usage and the command
// is over.
func parseManage(fs *flag.FlagSet, args []string, name, usage string, env manageEnv) (positional []string, done bool, err error) {
	positional, err = parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(env.stdout, usage)
		return nil, true, printDefaults(env.stdout, fs)
	}
	if err != nil {
		return nil, false, usageError{fmt.Sprintf("%s: %v (see lookout %s -h)", name, err, name)}
	}
	return positional, false, nil
}

// client returns the Management API client, or a usage error without a key.
func (c *manageConn) client() (*client.Manage, error) {
	if c.key == "" {
		return nil, usageError{"no management key: give --management-key or set LOOKOUT_MANAGEMENT_KEY"}
	}
	addr := c.addr
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	hc, err := httpClient(c.caFile, 0)
	if err != nil {
		return nil, err
	}
	return client.NewManage(addr, c.key, hc), nil
}

// printJSON prints v as indented JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("print answer: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// monitorsCommand is one command of lookout monitors: setup adds its
// flags to fs and returns what runs it once the flags are parsed.
type monitorsCommand struct {
	name, synopsis, about string
	args                  []string // names of the positional arguments
	setup                 func(fs *flag.FlagSet) func(ctx context.Context, c *client.Manage, args []string, env manageEnv) error
}

// monitorsCommands is the command table of lookout monitors. A monitor is
// named by its name or its uuid (resolveMonitor).
func monitorsCommands() []monitorsCommand {
	return []monitorsCommand{
		{name: "list", synopsis: "[--kind K] [--json]", about: "the account's monitors: a table with their state, or JSON", setup: setupList},
		{name: "get", synopsis: "NAME|UUID [--kind K] [--json]", about: "one monitor: its status (state, last ping or execution, what comes next) and manifest", args: []string{"NAME|UUID"}, setup: setupGet},
		{name: "events", synopsis: "NAME|UUID [--kind K] [--limit N] [--json]", about: "a monitor's newest events", args: []string{"NAME|UUID"}, setup: setupEvents},
		{name: "executions", synopsis: "NAME|UUID [--kind K] [--limit N] [--json]", about: "a check's newest executions", args: []string{"NAME|UUID"}, setup: setupExecutions},
		{name: "delete", synopsis: "NAME|UUID [--kind K] --confirm", about: "delete a monitor and its history (refused without --confirm)", args: []string{"NAME|UUID"}, setup: setupDelete},
		{name: "pause", synopsis: "NAME|UUID [--kind K] [--for 2h] [--reason TEXT]", about: "hold a monitor's alerts until it is resumed or --for has passed", args: []string{"NAME|UUID"}, setup: setupPause},
		{name: "resume", synopsis: "NAME|UUID [--kind K]", about: "resume a paused monitor (judged afresh now)", args: []string{"NAME|UUID"}, setup: setupResume},
	}
}

// monitorsUsage is the usage of lookout monitors.
func monitorsUsage() string {
	var b strings.Builder
	b.WriteString("Usage: lookout monitors COMMAND [flags]\n\nCommands:\n")
	for _, c := range monitorsCommands() {
		fmt.Fprintf(&b, "  %-12s %s\n", c.name, c.about)
	}
	b.WriteString("\nA monitor is named by its name or its uuid; --kind ping|http_check|ssl_check picks\n" +
		"one when a ping monitor and a check share the name.\n" +
		"--addr and --management-key also read LOOKOUT_ADDR and LOOKOUT_MANAGEMENT_KEY.\n" +
		"Run \"lookout monitors COMMAND -h\" for a command's flags.\n")
	return b.String()
}

// runMonitors runs lookout monitors with the process environment.
func runMonitors(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runMonitorsEnv(ctx, args, processManageEnv(getenv, stdout, stderr))
}

func runMonitorsEnv(ctx context.Context, args []string, env manageEnv) error {
	if len(args) == 0 {
		io.WriteString(env.stderr, monitorsUsage())
		return usageError{"monitors: no command given"}
	}
	sub, args := args[0], args[1:]
	var cmd *monitorsCommand
	commands := monitorsCommands()
	for i := range commands {
		if commands[i].name == sub {
			cmd = &commands[i]
		}
	}
	switch {
	case sub == "-h" || sub == "--help" || sub == "help":
		_, err := io.WriteString(env.stdout, monitorsUsage())
		return err
	case cmd == nil:
		io.WriteString(env.stderr, monitorsUsage())
		return usageError{fmt.Sprintf("monitors: unknown command %q", sub)}
	}
	name := "monitors " + sub
	fs, conn, err := manageFlags(name, env)
	if err != nil {
		return err
	}
	run := cmd.setup(fs)
	usage := "Usage: lookout monitors " + sub + " " + cmd.synopsis + "\n\n" + strings.ToUpper(cmd.about[:1]) + cmd.about[1:] + ".\n\nFlags:\n"
	positional, done, err := parseManage(fs, args, name, usage, env)
	if done || err != nil {
		return err
	}
	if len(positional) != len(cmd.args) {
		return usageError{fmt.Sprintf("%s: want %d argument(s) %s, got %q (see lookout %s -h)", name, len(cmd.args), strings.Join(cmd.args, " "), positional, name)}
	}
	c, err := conn.client()
	if err != nil {
		return err
	}
	if err := run(ctx, c, positional, env); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			return usageError{name + ": " + ue.msg}
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// kindFlag adds --kind: the kind of monitor a name means, or the kind to
// list.
func kindFlag(fs *flag.FlagSet) *string {
	return fs.String("kind", "", "ping, http_check, ssl_check, tcp_check or dns_check: the kind of monitor the name means (a ping monitor and a check may share a name)")
}

// listColumns are the columns of lookout monitors list, in order.
var listColumns = []struct {
	head  string
	value func(m client.MonitorWithStatus) string
}{
	{"KIND", func(m client.MonitorWithStatus) string { return m.Kind }},
	{"NAME", func(m client.MonitorWithStatus) string { return m.Name }},
	{"STATE", func(m client.MonitorWithStatus) string {
		if m.Status == nil {
			return "-"
		}
		return m.Status.State
	}},
	{"ENABLED", func(m client.MonitorWithStatus) string { return strconv.FormatBool(m.Enabled) }},
	{"SCHEDULE", func(m client.MonitorWithStatus) string { return scheduleLabel(m.Manifest) }},
	{"UUID", func(m client.MonitorWithStatus) string { return m.UUID }},
}

func setupList(fs *flag.FlagSet) func(context.Context, *client.Manage, []string, manageEnv) error {
	kind := fs.String("kind", "", "only monitors of this kind: ping, http_check, ssl_check, tcp_check or dns_check")
	asJSON := fs.Bool("json", false, `print {"monitors": [manifest with its status, ...]} as JSON instead of a table`)
	return func(ctx context.Context, c *client.Manage, _ []string, env manageEnv) error {
		ms, err := c.AllMonitorsWithStatus(ctx, *kind)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(env.stdout, map[string]any{"monitors": ms})
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
		for i, col := range listColumns {
			fmt.Fprint(tw, col.head, tabOrNewline(i, len(listColumns)))
		}
		for _, m := range ms {
			for i, col := range listColumns {
				fmt.Fprint(tw, col.value(m), tabOrNewline(i, len(listColumns)))
			}
		}
		return tw.Flush()
	}
}

// tabOrNewline ends column i of n.
func tabOrNewline(i, n int) string {
	if i == n-1 {
		return "\n"
	}
	return "\t"
}

func setupDelete(fs *flag.FlagSet) func(context.Context, *client.Manage, []string, manageEnv) error {
	kind := kindFlag(fs)
	confirm := fs.Bool("confirm", false, "really delete (required): the monitor's history goes too, and a ping's name is released")
	return func(ctx context.Context, c *client.Manage, args []string, env manageEnv) error {
		if !*confirm {
			return usageError{fmt.Sprintf("deleting %s is permanent (its history goes too): add --confirm", args[0])}
		}
		m, err := resolveMonitor(ctx, c, args[0], *kind)
		if err != nil {
			return err
		}
		if err := c.DeleteMonitor(ctx, m.UUID); err != nil {
			return err
		}
		_, err = fmt.Fprintf(env.stdout, "Deleted monitor %s.\n", args[0])
		return err
	}
}

// scheduleLabel is when a monitor runs, for the list: a schedule with its
// zone (an interval shorthand has none), a ping's interval, or "-".
func scheduleLabel(m manifest.Manifest) string {
	switch {
	case strings.ContainsAny(m.Schedule, " @"): // cron

		return m.Schedule + " (" + m.Timezone + ")"
	case m.Schedule != "":
		return "every " + m.Schedule
	case m.ExpectedIntervalSeconds != nil:
		return fmt.Sprintf("every %ds", *m.ExpectedIntervalSeconds)
	}
	return "-"
}
