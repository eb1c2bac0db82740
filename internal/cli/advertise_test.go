package cli

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

func TestAdvertiseAddresses(t *testing.T) {
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	base := []string{"--admin-token", "t", "--bootstrap-expect", "3"}
	t.Run("defaults to the bind addresses", func(t *testing.T) {
		c, err := parseControl(base, env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.advHTTP != "127.0.0.1:8080" || c.advRaft != "127.0.0.1:8300" || c.advGossip != "127.0.0.1:8301" {
			t.Fatalf("%q %q %q", c.advHTTP, c.advRaft, c.advGossip)
		}
	})
	t.Run("advertise-addr for all three, with the bound ports", func(t *testing.T) {
		c, err := parseControl(append(base, "--http-addr", "0.0.0.0:80", "--raft-addr", "0.0.0.0:7300", "--gossip-addr", ":7301", "--advertise-addr", "10.0.0.5"), env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.advHTTP != "10.0.0.5:80" || c.advRaft != "10.0.0.5:7300" || c.advGossip != "10.0.0.5:7301" {
			t.Fatalf("%q %q %q", c.advHTTP, c.advRaft, c.advGossip)
		}
	})
	t.Run("specific ones win, also from the environment", func(t *testing.T) {
		c, err := parseControl(append(base, "--http-addr", "0.0.0.0:80"), env(map[string]string{
			"LOOKOUT_ADVERTISE_ADDR": "node1.internal", "LOOKOUT_ADVERTISE_HTTP": "lb.internal:443", "LOOKOUT_ADVERTISE_RAFT": "[fd00::1]:9300",
		}), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.advHTTP != "lb.internal:443" || c.advRaft != "[fd00::1]:9300" || c.advGossip != "node1.internal:8301" {
			t.Fatalf("%q %q %q", c.advHTTP, c.advRaft, c.advGossip)
		}
	})
	t.Run("a dev node may bind everything", func(t *testing.T) {
		c, err := parseControl([]string{"--dev", "--http-addr", "0.0.0.0:8080"}, env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := advertisedHTTP(c.advHTTP, &net.TCPAddr{IP: net.IPv4zero, Port: 8080}); got != "0.0.0.0:8080" {
			t.Fatalf("dev http address %q", got)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"defaulted 0.0.0.0", []string{"--http-addr", "0.0.0.0:8080"}, "--http-addr 0.0.0.0:8080 listens on every interface"},
		{"defaulted ::", []string{"--raft-addr", "[::]:8300", "--advertise-http", "10.0.0.5:80"}, "--raft-addr [::]:8300 listens on every interface"},
		{"defaulted empty host", []string{"--gossip-addr", ":8301"}, "--gossip-addr :8301 listens on every interface"},
		{"given 0.0.0.0", []string{"--advertise-addr", "0.0.0.0"}, "--advertise-addr 0.0.0.0 is not an address peers can reach"},
		{"given ::", []string{"--advertise-http", "[::]:80"}, "--advertise-http [::]:80 is not an address peers can reach"},
		{"given raft 0.0.0.0", []string{"--advertise-raft", "0.0.0.0:8300"}, "--advertise-raft 0.0.0.0:8300 is not"},
		{"advertise-addr with a port", []string{"--advertise-addr", "10.0.0.5:80"}, "without a port"},
		{"advertise-http without a port", []string{"--advertise-http", "10.0.0.5"}, "must be host:port"},
		{"dev given 0.0.0.0", []string{"--dev", "--advertise-addr", "::"}, "is not an address peers can reach"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args[0] != "--dev" {
				args = append(append([]string{}, base...), args...)
			}
			_, err := parseControl(args, env(nil), io.Discard)
			var ue usageError
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ue) {
				t.Fatalf("error %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}
