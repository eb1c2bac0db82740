package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"lookout/internal/client"
	"lookout/internal/manifest"
)

const applyUsage = `Usage: lookout apply -f FILE [--dry-run] [--format yaml|json]

Make the account's monitors match a bundle (manifest_version and monitors),
as written by lookout export. Entries match monitors by (kind, name). The
whole bundle is checked first: if any entry is invalid, every problem is
printed (monitors.<i>: code: message) and nothing is written. Apply never
deletes: the account's monitors absent from the bundle are listed as
orphaned and left alone. FILE is YAML (.yaml, .yml) or JSON (.json), or -
for stdin; --format overrides the extension (default yaml, which also reads
JSON).

The plan is printed as:
  + create ping "backup"
  ~ update http_check "site" (UUID)
      config.url: "https://a.example/" -> "https://b.example/"
  = 3 unchanged
  ? orphaned ping "old" (UUID)

  Plan: 1 to create, 1 to update, 3 unchanged, 1 orphaned (apply never deletes).

Exit status: 0 when applied, or a dry run without changes; 2 when a dry run
has changes (as terraform plan -detailed-exitcode), or on a usage error; 1
on any other error, an invalid bundle included. --addr and --management-key
also read LOOKOUT_ADDR and LOOKOUT_MANAGEMENT_KEY.

Flags:
`

// shownError is an error whose details were already printed: it reads as
// msg and unwraps to err.
type shownError struct {
	msg string
	err error
}

func (e shownError) Error() string { return e.msg }
func (e shownError) Unwrap() error { return e.err }

// runApply runs lookout apply with the process environment.
func runApply(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runApplyEnv(ctx, args, processManageEnv(getenv, stdout, stderr))
}

func runApplyEnv(ctx context.Context, args []string, env manageEnv) error {
	fs, conn, err := manageFlags("apply", env)
	if err != nil {
		return err
	}
	file := fs.String("f", "", "the bundle: a .yaml, .yml or .json file, or - for stdin (required)")
	dryRun := fs.Bool("dry-run", false, "only show what would change; write nothing")
	format := fs.String("format", "", "yaml or json (default: by the extension of -f, else yaml)")
	positional, done, err := parseManage(fs, args, "apply", applyUsage, env)
	if done || err != nil {
		return err
	}
	if len(positional) != 0 {
		return usageError{fmt.Sprintf("apply: unexpected argument(s) %q; give the bundle with -f (see lookout apply -h)", positional)}
	}
	if *file == "" {
		return usageError{"apply: -f FILE is required (- for stdin; see lookout apply -h)"}
	}
	f, err := bundleFormat(*format, *file, "apply")
	if err != nil {
		return err
	}
	c, err := conn.client()
	if err != nil {
		return err
	}
	var data []byte
	if *file == "-" {
		data, err = io.ReadAll(env.stdin)
	} else {
		data, err = os.ReadFile(*file)
	}
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if f == formatYAML {
		if data, err = manifest.BundleFromYAML(data); err != nil {
			return fmt.Errorf("apply: %s: %w", *file, err)
		}
	}
	rep, err := c.Apply(ctx, data, *dryRun)
	return reportApply(env, "apply", rep, err)
}

// reportApply prints what an apply by command name answered, and returns
// its outcome as lookout apply's exit status: the problems of an invalid
// bundle (exit 1), or the plan; a dry run with changes is exit 2.
func reportApply(env manageEnv, name string, rep *client.ApplyReport, err error) error {
	var ve *client.ValidationError
	if errors.As(err, &ve) {
		problems := ve.Problems()
		for _, p := range problems {
			fmt.Fprintln(env.stderr, p)
		}
		return shownError{fmt.Sprintf("%s: %s (%d problem(s))", name, ve.Message, len(problems)), err}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := printPlan(env.stdout, rep); err != nil {
		return err
	}
	if rep.DryRun && rep.HasChanges() {
		return exitError{2, fmt.Sprintf("%s: the dry run has %d change(s) to apply", name, rep.Summary.Create+rep.Summary.Update)}
	}
	return nil
}

// printPlan prints an apply report as a plan, terraform style.
func printPlan(w io.Writer, rep *client.ApplyReport) error {
	var b bytes.Buffer
	for _, c := range rep.Changes {
		switch c.Action {
		case client.ActionCreate:
			fmt.Fprintf(&b, "+ create %s %q%s\n", c.Kind, c.Name, inParens(c.UUID))
		case client.ActionUpdate:
			fmt.Fprintf(&b, "~ update %s %q%s\n", c.Kind, c.Name, inParens(c.UUID))
		default:
			fmt.Fprintf(&b, "* %s %s %q%s\n", c.Action, c.Kind, c.Name, inParens(c.UUID))
		}
		fields := make([]string, 0, len(c.Diff))
		for k := range c.Diff {
			fields = append(fields, k)
		}
		sort.Strings(fields)
		for _, k := range fields {
			fmt.Fprintf(&b, "    %s: %s -> %s\n", k, compactJSON(c.Diff[k][0]), compactJSON(c.Diff[k][1]))
		}
	}
	if n := rep.Summary.Unchanged; n > 0 {
		fmt.Fprintf(&b, "= %d unchanged\n", n)
	}
	for _, o := range rep.Orphaned {
		fmt.Fprintf(&b, "? orphaned %s %q%s\n", o.Kind, o.Name, inParens(o.UUID))
	}
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	s := rep.Summary
	if rep.DryRun {
		fmt.Fprintf(&b, "Plan: %d to create, %d to update, %d unchanged, %d orphaned (apply never deletes).\n", s.Create, s.Update, s.Unchanged, s.Orphaned)
	} else {
		fmt.Fprintf(&b, "Applied: %d created, %d updated, %d unchanged, %d orphaned (apply never deletes).\n", s.Create, s.Update, s.Unchanged, s.Orphaned)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// inParens is " (s)", or "" for an empty s.
func inParens(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// compactJSON renders a diff value on one line; empty is null.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
