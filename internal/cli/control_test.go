package cli

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseControl(t *testing.T) {
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	t.Run("dev defaults", func(t *testing.T) {
		c, err := parseControl([]string{"--dev"}, env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.nodeID != "dev" || c.bootstrapExpect != 1 || c.gossipAddr != "" || c.httpAddr != "127.0.0.1:8080" || c.dataDir != "./lookout-data" {
			t.Fatalf("%+v", c)
		}
		if c.agentOfflineAfter != time.Minute || c.agentForgetAfter != 30*24*time.Hour {
			t.Fatalf("agent offline after %v, forget after %v", c.agentOfflineAfter, c.agentForgetAfter)
		}
		if c.maxConnections != 10_000 {
			t.Fatalf("max connections %d, want 10000", c.maxConnections)
		}
	})
	t.Run("environment, and the command line wins", func(t *testing.T) {
		c, err := parseControl([]string{"--node-id", "flag"}, env(map[string]string{
			"LOOKOUT_NODE_ID": "env", "LOOKOUT_ADMIN_TOKEN": "tok", "LOOKOUT_BOOTSTRAP_EXPECT": "3",
			"LOOKOUT_JOIN": "a:1, b:2", "LOOKOUT_REMOVE_GONE_AFTER": "1h", "LOOKOUT_AGENT_OFFLINE_AFTER": "15s",
		}), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.nodeID != "flag" || c.adminToken != "tok" || c.bootstrapExpect != 3 || strings.Join(c.join, "|") != "a:1|b:2" || c.removeGoneAfter.String() != "1h0m0s" || c.agentOfflineAfter != 15*time.Second {
			t.Fatalf("%+v", c)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"cluster needs a token", []string{"--bootstrap-expect", "3"}, nil, "--admin-token"},
		{"cluster needs expect or join", []string{"--admin-token", "t"}, nil, "--bootstrap-expect N"},
		{"dev alone", []string{"--dev", "--join", "x:1"}, nil, "--dev runs one node alone"},
		{"no arguments", []string{"--dev", "extra"}, nil, "takes no arguments"},
		{"negative expect", []string{"--admin-token", "t", "--join", "x:1", "--bootstrap-expect", "-1"}, nil, "0 or more"},
		{"bad env value", []string{"--dev"}, map[string]string{"LOOKOUT_BOOTSTRAP_EXPECT": "three"}, "LOOKOUT_BOOTSTRAP_EXPECT"},
		{"no connections", []string{"--dev", "--max-connections", "0"}, nil, "--max-connections must be at least 1"},
		{"agent offline after under 10s", []string{"--dev", "--agent-offline-after", "9s"}, nil, "--agent-offline-after must be at least 10s"},
		{"agent forget after under 1h", []string{"--dev", "--agent-forget-after", "59m"}, nil, "--agent-forget-after must be 0"},
		{"agent forget after under offline after", []string{"--dev", "--agent-forget-after", "2h", "--agent-offline-after", "3h"}, nil, "--agent-forget-after must be 0"},
		{"alert retention under 1h", []string{"--dev", "--alert-retention", "59m"}, nil, "--alert-retention must be at least 1h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseControl(tc.args, env(tc.env), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	var ue usageError
	_, err := parseControl([]string{"--admin-token", "t"}, env(nil), io.Discard)
	if !errors.As(err, &ue) || ExitCode(err) != 2 {
		t.Fatalf("a usage mistake should exit 2: %v", err)
	}
}

func TestDevAdminTokenIsMadeOnceAndKept(t *testing.T) {
	dir := t.TempDir()
	tok, fresh, err := devAdminToken(dir)
	if err != nil || !fresh || !strings.HasPrefix(tok, "adm_") || len(tok) < 36 {
		t.Fatalf("first: %q %v %v", tok, fresh, err)
	}
	again, fresh, err := devAdminToken(dir)
	if err != nil || fresh || again != tok {
		t.Fatalf("second: %q %v %v, want %q not fresh", again, fresh, err, tok)
	}
}
