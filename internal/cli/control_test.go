package cli

import (
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
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
	t.Run("trusted proxies", func(t *testing.T) {
		c, err := parseControl([]string{"--dev"}, env(map[string]string{"LOOKOUT_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7"}), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(c.trustedProxies) != "[10.0.0.0/8 192.0.2.7/32]" {
			t.Fatalf("trusted proxies %v", c.trustedProxies)
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
		{"audit retention under 1h", []string{"--dev", "--audit-retention", "59m"}, nil, "--audit-retention must be at least 1h"},
		{"trusted proxy not a CIDR", []string{"--dev", "--trusted-proxies", "10.0.0.0/8,lb.example"}, nil, "--trusted-proxies"},
		{"smtp address not host:port", []string{"--dev", "--smtp-addr", "smtp.example.com"}, nil, "--smtp-addr"},
		{"smtp starttls unknown", []string{"--dev", "--smtp-starttls", "always"}, nil, "--smtp-starttls \"always\" must be opportunistic, required or off"},
		{"oidc without a client", []string{"--dev", "--public-url", "https://lookout.example.com", "--oidc-issuer", "https://idp.example.com"}, nil, "--oidc-issuer needs --oidc-client-id and --oidc-client-secret"},
		{"oidc without the public URL", []string{"--dev", "--oidc-issuer", "https://idp.example.com", "--oidc-client-id", "c"}, map[string]string{"LOOKOUT_OIDC_CLIENT_SECRET": "s"}, "--oidc-issuer needs --public-url"},
		{"oidc issuer not a URL", []string{"--dev", "--oidc-issuer", "idp.example.com"}, nil, "--oidc-issuer must be an http(s) URL"},
		{"oidc client without an issuer", []string{"--dev", "--oidc-client-id", "c"}, nil, "need --oidc-issuer"},
		{"oidc domain with an at", []string{"--dev", "--public-url", "https://l.example.com", "--oidc-issuer", "https://idp.example.com", "--oidc-client-id", "c", "--oidc-client-secret", "s", "--oidc-allowed-domains", "a@b.com"}, nil, "--oidc-allowed-domains takes domains"},
		{"smtp password in clear", []string{"--dev", "--smtp-addr", "smtp.example.com:587", "--smtp-user", "u", "--smtp-starttls", "off"}, nil, "only sent over TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseControl(tc.args, env(tc.env), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("single sign-on", func(t *testing.T) {
		c, err := parseControl([]string{"--dev", "--public-url", "https://lookout.example.com", "--oidc-issuer", "https://idp.example.com/realms/acme",
			"--oidc-client-id", "lookout", "--oidc-allowed-domains", "example.com,@corp.example"}, env(map[string]string{"LOOKOUT_OIDC_CLIENT_SECRET": "s3cret"}), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		o := c.oidc.options()
		if o == nil || o.Issuer != "https://idp.example.com/realms/acme" || o.ClientID != "lookout" || o.ClientSecret != "s3cret" || strings.Join(o.AllowedDomains, "|") != "example.com|@corp.example" {
			t.Fatalf("%+v", o)
		}
		if c, _ := parseControl([]string{"--dev"}, env(nil), io.Discard); c.oidc.options() != nil {
			t.Fatal("single sign-on without --oidc-issuer")
		}
	})
	var ue usageError
	_, err := parseControl([]string{"--admin-token", "t"}, env(nil), io.Discard)
	if !errors.As(err, &ue) || ExitCode(err) != 2 {
		t.Fatalf("a usage mistake should exit 2: %v", err)
	}
}

// TestParseSMTP: --smtp-starttls defaults to opportunistic and takes
// required and off, from the flag or LOOKOUT_SMTP_STARTTLS; a user with
// STARTTLS off is fine on port 465 or to a server on loopback.
func TestParseSMTP(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--dev", "--smtp-addr", "smtp.example.com:587"}, nil, "opportunistic"},
		{[]string{"--dev", "--smtp-addr", "smtp.example.com:587", "--smtp-starttls", "required"}, nil, "required"},
		{[]string{"--dev"}, map[string]string{"LOOKOUT_SMTP_STARTTLS": "off"}, "off"},
		{[]string{"--dev", "--smtp-addr", "smtp.example.com:465", "--smtp-user", "u", "--smtp-starttls", "off"}, nil, "off"},
		{[]string{"--dev", "--smtp-addr", "127.0.0.1:25", "--smtp-user", "u", "--smtp-starttls", "off"}, nil, "off"},
	} {
		c, err := parseControl(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if c.smtp.StartTLS != tc.want {
			t.Errorf("%q %v: --smtp-starttls %q, want %q", tc.args, tc.env, c.smtp.StartTLS, tc.want)
		}
	}
}

// TestParseAllowPrivateTargets: private targets are refused by default,
// allowed by --allow-private-targets (or its variable), and allowed with
// --dev unless given false.
func TestParseAllowPrivateTargets(t *testing.T) {
	cluster := []string{"--admin-token", "t", "--bootstrap-expect", "1"}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want bool
	}{
		{"default", cluster, nil, false},
		{"flag", append(cluster, "--allow-private-targets"), nil, true},
		{"variable", cluster, map[string]string{"LOOKOUT_ALLOW_PRIVATE_TARGETS": "true"}, true},
		{"dev", []string{"--dev"}, nil, true},
		{"dev, given false", []string{"--dev", "--allow-private-targets=false"}, nil, false},
		{"dev, variable false", []string{"--dev"}, map[string]string{"LOOKOUT_ALLOW_PRIVATE_TARGETS": "false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseControl(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if c.allowPrivate != tc.want {
				t.Fatalf("allow private targets %v, want %v", c.allowPrivate, tc.want)
			}
		})
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

// The requests the HTTP write timeout does not bound: streams and long
// transfers.
func TestStreamsHaveNoWriteTimeout(t *testing.T) {
	for _, tc := range []struct {
		method, path, accept string
		want                 bool
	}{
		{"GET", "/live", "text/event-stream", true},
		{"GET", "/monitors/abc/live", "", true},
		{"GET", "/admin/v1/snapshot", "", true},
		{"POST", "/admin/v1/snapshot", "", true},
		{"GET", "/admin/v1/debug/pprof/profile", "", true},
		{"GET", "/api/v1/monitors", "", false},
		{"POST", "/ping", "", false},
		{"GET", "/", "", false},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		if got := streams(r); got != tc.want {
			t.Errorf("%s %s: %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}
