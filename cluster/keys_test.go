package cluster

import (
	"bytes"
	"encoding/hex"
	"net"
	"strings"
	"testing"
)

func TestSubkeysAreIndependentOfEachOtherAndTheSecret(t *testing.T) {
	token := []byte("adm_the-operator-token")
	k, err := deriveKeys(token)
	if err != nil {
		t.Fatal(err)
	}
	if len(k.rpc) != 32 || len(k.gossip) != 32 {
		t.Fatalf("key sizes %d, %d; want 32 (AES-256 for gossip)", len(k.rpc), len(k.gossip))
	}
	if bytes.Equal(k.rpc, k.gossip) {
		t.Fatal("rpc and gossip keys are the same")
	}
	for name, key := range map[string][]byte{"rpc": k.rpc, "gossip": k.gossip} {
		if bytes.Contains(key, token) || strings.Contains(hex.EncodeToString(key), string(token)) {
			t.Fatalf("%s key carries the token", name)
		}
	}
	n := &Node{keys: k}
	if tok := n.rpcToken(); tok == string(token) || strings.Contains(tok, string(token)) {
		t.Fatalf("rpc token %q is the admin token", tok)
	}
	again, _ := deriveKeys(token)
	if !bytes.Equal(again.rpc, k.rpc) || !bytes.Equal(again.gossip, k.gossip) {
		t.Fatal("derivation is not deterministic: nodes would not agree")
	}
	other, _ := deriveKeys([]byte("adm_another-token"))
	if bytes.Equal(other.rpc, k.rpc) || bytes.Equal(other.gossip, k.gossip) {
		t.Fatal("another secret gives the same keys")
	}
	if _, err := deriveKeys(nil); err == nil {
		t.Fatal("an empty secret was accepted")
	}
}

func TestAdvertiseAddr(t *testing.T) {
	bound := &net.TCPAddr{IP: net.IPv4zero, Port: 8300}
	for _, tc := range []struct {
		adv, want string
	}{
		{"10.0.0.5", "10.0.0.5:8300"},
		{"10.0.0.5:9300", "10.0.0.5:9300"},
		{"node1.internal", "node1.internal:8300"},
		{"[fd00::1]:0", "[fd00::1]:8300"},
		{"fd00::1", "[fd00::1]:8300"},
	} {
		got, err := advertiseAddr(tc.adv, bound)
		if err != nil || got.String() != tc.want {
			t.Errorf("advertiseAddr(%q) = %v, %v; want %s", tc.adv, got, err, tc.want)
		}
	}
	for _, adv := range []string{"", "0.0.0.0", "[::]:8300", ":8300", "10.0.0.5:http"} {
		if got, err := advertiseAddr(adv, bound); err == nil {
			t.Errorf("advertiseAddr(%q) = %v, want an error", adv, got)
		}
	}
}

func TestPanelKeyIsItsOwnSubkey(t *testing.T) {
	token := []byte("adm_the-operator-token")
	k, _ := deriveKeys(token)
	p, err := PanelKey(token)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 32 || bytes.Equal(p, k.rpc) || bytes.Equal(p, k.gossip) || bytes.Contains(p, token) {
		t.Fatalf("panel key %x is not an independent 32-byte subkey", p)
	}
	if again, _ := PanelKey(token); !bytes.Equal(again, p) {
		t.Fatal("not deterministic: nodes would not accept each other's sessions")
	}
	if _, err := PanelKey(nil); err == nil {
		t.Fatal("empty secret accepted")
	}
}

// TestRegionGossipKeys: each region's key is a 32-byte subkey of its own,
// the same on every node (deterministic), independent of the cluster's
// keys and of other regions', and another secret gives another key.
func TestRegionGossipKeys(t *testing.T) {
	token := []byte("adm_the-operator-token")
	k, _ := deriveKeys(token)
	panel, _ := PanelKey(token)
	eu, err := RegionGossipKey(token, "eu-1")
	if err != nil {
		t.Fatal(err)
	}
	us, _ := RegionGossipKey(token, "us-1")
	other, _ := RegionGossipKey([]byte("adm_another-token"), "eu-1")
	if len(eu) != 32 || bytes.Equal(eu, us) || bytes.Equal(eu, k.gossip) || bytes.Equal(eu, k.rpc) || bytes.Equal(eu, panel) || bytes.Equal(eu, other) {
		t.Fatalf("region key %x is not an independent 32-byte subkey", eu)
	}
	if again, _ := RegionGossipKey(token, "eu-1"); !bytes.Equal(again, eu) {
		t.Fatal("not deterministic: control nodes would hand a region different keys")
	}
	if _, err := RegionGossipKey(nil, "eu-1"); err == nil {
		t.Fatal("empty secret accepted")
	}
	if _, err := RegionGossipKey(token, ""); err == nil {
		t.Fatal("empty region accepted")
	}
}
