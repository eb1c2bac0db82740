// Package cli is the command line of the lookout binary: one composition
// root per role (lookout control, lookout agent) and the client
// commands. Every flag also reads LOOKOUT_<FLAG> from the environment.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Version is the version of the binary, set at build time with
// -ldflags "-X lookout/internal/cli.Version=...".
var Version = "dev"

// usageError is a mistake on the command line (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// ExitCode is the process exit code for an error Main returned.
func ExitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, flag.ErrHelp) {
		return 2
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

const usage = `lookout: job monitoring you run yourself.

Usage:
  lookout control [flags]     run a control-plane node (--dev for one node on a laptop)
  lookout agent [flags]       run an edge agent: checks near private endpoints, local pings, disk buffer
  lookout admin COMMAND ...   operator commands (accounts, keys, groups, agent tokens, cluster)
  lookout ping MONITOR ...    send one event (--status run|complete|fail|skip) to the Ingest API
  lookout exec MONITOR -- CMD run CMD and report its run, then its complete or fail
  lookout export [-o FILE]    print or save the account's monitors as a bundle (YAML or JSON)
  lookout apply -f FILE       make the account's monitors match a bundle (--dry-run for the plan)
  lookout monitors COMMAND    the account's monitors: list, get NAME (with its status), events, executions, delete
  lookout sync                turn a crontab into ping monitors (--rewrite, --write: wrap its jobs in lookout exec)
  lookout version             print the version

Run "lookout COMMAND -h" for the flags of a command.
`

// Main runs the command named by args[0].
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError{"no command given"}
	}
	switch args[0] {
	case "control":
		return runControl(ctx, args[1:], os.Getenv, stdout, stderr)
	case "agent":
		return runAgent(ctx, args[1:], os.Getenv, stdout, stderr)
	case "admin":
		return runAdmin(ctx, args[1:], stdout, stderr)
	case "ping":
		return runPing(ctx, args[1:], os.Getenv, stdout, stderr)
	case "exec":
		return runExec(ctx, args[1:], os.Getenv, stdout, stderr)
	case "export":
		return runExport(ctx, args[1:], os.Getenv, stdout, stderr)
	case "apply":
		return runApply(ctx, args[1:], os.Getenv, stdout, stderr)
	case "monitors":
		return runMonitors(ctx, args[1:], os.Getenv, stdout, stderr)
	case "sync":
		return runSync(ctx, args[1:], os.Getenv, stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "lookout", Version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}
