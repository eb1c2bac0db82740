package cli

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestParseAgent(t *testing.T) {
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	base := map[string]string{"LOOKOUT_CONTROL": "http://a:8080, https://b:8443", "LOOKOUT_TOKEN": "at_x", "LOOKOUT_REGION": "eu-1", "LOOKOUT_DATA_DIR": "/tmp/ag"}
	t.Run("environment and defaults", func(t *testing.T) {
		c, err := parseAgent([]string{"--name", "edge-1"}, env(base), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(c.control, "|") != "http://a:8080|https://b:8443" || c.token != "at_x" || c.region != "eu-1" || c.dataDir != "/tmp/ag" ||
			c.name != "edge-1" || c.httpAddr != "127.0.0.1:8090" || c.bufferMaxBytes != 1<<30 || c.gossipAddr != "" {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("name defaults to the host name", func(t *testing.T) {
		c, err := parseAgent(nil, env(base), io.Discard)
		if err != nil || c.name == "" {
			t.Fatalf("%+v %v", c, err)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		drop string
		want string
	}{
		{"control required", nil, "LOOKOUT_CONTROL", "--control"},
		{"token required", nil, "LOOKOUT_TOKEN", "--token"},
		{"region required", nil, "LOOKOUT_REGION", "--region"},
		{"data dir required", nil, "LOOKOUT_DATA_DIR", "--data-dir"},
		{"bad control URL", []string{"--control", "a:8080"}, "", "want http://host:port"},
		{"cert without key", []string{"--tls-cert", "c.pem"}, "", "go together"},
		{"tiny buffer", []string{"--buffer-max-bytes", "1000"}, "", "at least 1048576"},
		{"join without gossip", []string{"--join", "x:1"}, "", "need --gossip-addr"},
		{"no arguments", []string{"extra"}, "", "takes no arguments"},
		{"short gossip key", []string{"--gossip-addr", "127.0.0.1:0", "--gossip-key", "c2hvcnQ="}, "", "16, 24 or 32 bytes"},
		{"gossip key without gossip", []string{"--gossip-key", "MDEyMzQ1Njc4OWFiY2RlZg=="}, "", "need --gossip-addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := map[string]string{}
			for k, v := range base {
				if k != tc.drop {
					e[k] = v
				}
			}
			_, err := parseAgent(tc.args, env(e), io.Discard)
			var ue usageError
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ue) {
				t.Fatalf("error %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}
