package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"lookout/internal/client"
	"lookout/internal/manifest"
)

// manageEnv is what the Management API commands (export, apply, monitors)
// take from the process; tests give their own.
type manageEnv struct {
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
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

const monitorsUsage = `Usage: lookout monitors COMMAND [flags]

Commands:
  list [--kind K] [--json]    the account's monitors: a table (KIND NAME UUID ENABLED SCHEDULE) or JSON
  get UUID                    one monitor's manifest, as JSON
  delete UUID --confirm       delete a monitor and its history (refused without --confirm)
  pause NAME [--for 2h] [--reason TEXT]
                              hold a monitor's alerts until resumed or --for has passed
  resume NAME                 resume a paused monitor (judged afresh now)

--addr and --management-key also read LOOKOUT_ADDR and LOOKOUT_MANAGEMENT_KEY.
Run "lookout monitors COMMAND -h" for a command's flags.
`

// runMonitors runs lookout monitors with the process environment.
func runMonitors(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runMonitorsEnv(ctx, args, processManageEnv(getenv, stdout, stderr))
}

func runMonitorsEnv(ctx context.Context, args []string, env manageEnv) error {
	if len(args) == 0 {
		io.WriteString(env.stderr, monitorsUsage)
		return usageError{"monitors: no command given"}
	}
	sub, args := args[0], args[1:]
	if sub == "pause" || sub == "resume" {
		return runMonitorsPause(ctx, sub, args, env)
	}
	name := "monitors " + sub
	fs, conn, err := manageFlags(name, env)
	if err != nil {
		return err
	}
	var kind *string
	var asJSON, confirm *bool
	var synopsis, arg string
	switch sub {
	case "list":
		kind = fs.String("kind", "", "only monitors of this kind: ping, http_check or ssl_check")
		asJSON = fs.Bool("json", false, `print {"monitors": [manifest, ...]} as JSON instead of a table`)
		synopsis = "list [--kind K] [--json]\n\nList the account's monitors, in (kind, name) order."
	case "get":
		arg, synopsis = "UUID", "get UUID\n\nPrint one monitor's manifest as JSON."
	case "delete":
		arg = "UUID"
		confirm = fs.Bool("confirm", false, "really delete (required)")
		synopsis = "delete UUID --confirm\n\nDelete a monitor with its event history; a ping's name is released.\nNothing is sent without --confirm."
	case "-h", "--help", "help":
		_, err := io.WriteString(env.stdout, monitorsUsage)
		return err
	default:
		io.WriteString(env.stderr, monitorsUsage)
		return usageError{fmt.Sprintf("monitors: unknown command %q", sub)}
	}
	usage := "Usage: lookout monitors " + synopsis + "\n\nFlags:\n"
	positional, done, err := parseManage(fs, args, name, usage, env)
	if done || err != nil {
		return err
	}
	if want := len(strings.Fields(arg)); len(positional) != want {
		return usageError{fmt.Sprintf("%s: want %d argument(s) %s, got %q (see lookout %s -h)", name, want, arg, positional, name)}
	}
	if confirm != nil && !*confirm {
		return usageError{fmt.Sprintf("%s: deleting %s is permanent (its history goes too): add --confirm", name, positional[0])}
	}
	c, err := conn.client()
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		ms, err := c.AllMonitors(ctx, *kind)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if *asJSON {
			return printJSON(env.stdout, map[string]any{"monitors": ms})
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tNAME\tUUID\tENABLED\tSCHEDULE")
		for _, m := range ms {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%s\n", m.Kind, m.Name, m.UUID, m.Enabled, scheduleLabel(m))
		}
		return tw.Flush()
	case "get":
		m, err := c.GetMonitor(ctx, positional[0])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return printJSON(env.stdout, m)
	default: // delete
		if err := c.DeleteMonitor(ctx, positional[0]); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		_, err := fmt.Fprintf(env.stdout, "Deleted monitor %s.\n", positional[0])
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
