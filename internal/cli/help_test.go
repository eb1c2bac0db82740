package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestEveryCommandHelp asks every command for -h through Main: the usage
// goes to stdout and Main returns nil (exit 0), so the binary prints no
// "flag: help requested" after it.
func TestEveryCommandHelp(t *testing.T) {
	t.Setenv("LOOKOUT_ADMIN_TOKEN", "")
	for _, args := range [][]string{
		{"control", "-h"},
		{"agent", "-h"},
		{"agent", "--help"},
		{"admin", "-h"},
		{"admin", "account", "list", "-h"},
		{"ping", "-h"},
		{"exec", "-h"},
		{"export", "-h"},
		{"apply", "-h"},
		{"monitors", "-h"},
		{"monitors", "get", "-h"},
		{"monitors", "events", "-h"},
		{"monitors", "executions", "-h"},
		{"help"},
	} {
		var stdout, stderr bytes.Buffer
		err := Main(context.Background(), args, &stdout, &stderr)
		if err != nil {
			t.Errorf("lookout %s: %v (exit %d), want nil", strings.Join(args, " "), err, ExitCode(err))
		}
		if !strings.Contains(stdout.String(), "Usage") || stderr.Len() != 0 {
			t.Errorf("lookout %s: usage on stdout %q, stderr %q", strings.Join(args, " "), firstLine(stdout.String()), stderr.String())
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
