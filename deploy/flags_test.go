package deploy

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"lookout/internal/cli"
)

// agentFlagsDocumented are the flags of `lookout agent` that agent/README.md
// documents; the files are checked against them until
// the command exists, then against its own -h.
var agentFlagsDocumented = []string{
	"control", "token", "region", "data-dir", "name", "http-addr", "gossip-addr", "join",
	"buffer-max-bytes", "ca-file", "tls-cert", "tls-key",
}

// flagSet is the flags of a lookout command: name -> whether it takes a
// value (false for a boolean).
type flagSet map[string]bool

var usageFlag = regexp.MustCompile(`(?m)^\s+-{1,2}([a-z0-9][a-z0-9-]*)( \S+)?\s*$`)

// commandFlags runs `lookout CMD -h` in this process and reads the flags
// it lists; ok is false when there is no such command.
func commandFlags(t *testing.T, cmd string) (flags flagSet, ok bool) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := cli.Main(context.Background(), []string{cmd, "-h"}, &out, &errOut)
	text := out.String() + errOut.String()
	if err != nil && strings.Contains(err.Error(), fmt.Sprintf("unknown command %q", cmd)) {
		return nil, false
	}
	flags = flagSet{}
	for _, m := range usageFlag.FindAllStringSubmatch(text, -1) {
		flags[m[1]] = m[2] != ""
	}
	if len(flags) == 0 {
		t.Fatalf("lookout %s -h listed no flags:\n%s", cmd, text)
	}
	return flags, true
}

func controlFlags(t *testing.T) flagSet {
	t.Helper()
	f, ok := commandFlags(t, "control")
	if !ok {
		t.Fatal("lookout control: unknown command")
	}
	return f
}

func agentFlags(t *testing.T) flagSet {
	t.Helper()
	if f, ok := commandFlags(t, "agent"); ok {
		return f
	}
	t.Log("lookout agent is not built: agent flags checked against the documented ones")
	f := flagSet{}
	for _, n := range agentFlagsDocumented {
		f[n] = true
	}
	return f
}

// parseArgs reads a lookout command line (without the binary): the
// command, then flags as -name, --name, --name=value or --name value.
// Every flag must exist; the values are returned by name.
func parseArgs(t *testing.T, where string, args []string, known flagSet) map[string]string {
	t.Helper()
	vals := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			t.Errorf("%s: %q is not a flag (positional arguments are not expected)", where, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue, ok := known[name]
		if !ok {
			t.Errorf("%s: unknown flag --%s", where, name)
			continue
		}
		if _, dup := vals[name]; dup {
			t.Errorf("%s: --%s given twice", where, name)
		}
		if takesValue && !hasVal {
			if i+1 >= len(args) {
				t.Errorf("%s: --%s has no value", where, name)
				continue
			}
			i++
			val = args[i]
		}
		vals[name] = val
	}
	return vals
}

func TestFlagsOfTheCommandLine(t *testing.T) {
	c := controlFlags(t)
	for _, n := range []string{"node-id", "data-dir", "bootstrap-expect", "join", "advertise-addr", "tls-cert", "tls-ca"} {
		if !c[n] {
			t.Errorf("lookout control -h does not list --%s with a value: %v", n, c)
		}
	}
	if v, ok := c["dev"]; !ok || v {
		t.Errorf("--dev should be listed as a boolean: %v", c)
	}
	a := agentFlags(t)
	for _, n := range agentFlagsDocumented {
		if _, ok := a[n]; !ok {
			t.Errorf("lookout agent does not have --%s, which agent/README.md documents", n)
		}
	}
}
