package cli

import (
	"io"
	"strings"
	"testing"
)

// TestAccountShareFlags: the per-account shares default to 8, 0 lifts
// the bound (a negative option), the environment sets them too, and a
// bad value is a usage error.
func TestAccountShareFlags(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	base := []string{"--admin-token", "t", "--bootstrap-expect", "3"}
	c, err := parseControl(base, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.checkShare.option() != 8 || c.alertShare.option() != 8 {
		t.Fatalf("defaults %d, %d", c.checkShare.option(), c.alertShare.option())
	}
	c, err = parseControl(append(base, "--account-check-share", "0"), env(map[string]string{"LOOKOUT_ACCOUNT_ALERT_SHARE": "3"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.checkShare.option() != -1 || c.alertShare.option() != 3 {
		t.Fatalf("check share %d, alert share %d", c.checkShare.option(), c.alertShare.option())
	}
	for _, v := range []string{"-1", "eight", ""} {
		if _, err := parseControl(append(base, "--account-alert-share", v), env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "0 or more") {
			t.Errorf("--account-alert-share %q: %v", v, err)
		}
	}
	a, err := parseAgent([]string{"--control", "http://127.0.0.1:1", "--token", "at_x", "--region", "eu-1", "--data-dir", t.TempDir(), "--account-check-share", "2"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if a.checkShare.option() != 2 {
		t.Fatalf("agent check share %d", a.checkShare.option())
	}
}
