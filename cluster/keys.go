package cluster

import (
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
)

// The HKDF info strings of the cluster's subkeys: one purpose each, so a
// key learnt from one channel says nothing about the other or the secret.
const (
	rpcKeyInfo    = "lookout cluster v2: node-to-node rpc bearer token"
	gossipKeyInfo = "lookout cluster v2: memberlist gossip encryption (AES-256)"
	panelKeyInfo  = "lookout cluster v2: web panel session and csrf signing (HMAC-SHA256)"
	// regionKeyInfo is followed by the region's name: one key per region.
	regionKeyInfo = "lookout cluster v2: agent region gossip encryption (AES-256), region "
)

// RegionGossipKey derives from the cluster secret the gossip key of the
// agents of region (32 bytes, AES-256 in memberlist): every control node
// derives the same key for a region and hands it to the region's agents
// with their assignments, so only holders of an agent token of the region
// can join its pool. Regions get independent keys: a key learnt in one
// region opens no other, and says nothing of the secret or the cluster's
// own keys. Changing the secret changes every region's key.
func RegionGossipKey(secret []byte, region string) ([]byte, error) {
	if len(secret) == 0 {
		return nil, fmt.Errorf("cluster secret is empty")
	}
	if region == "" {
		return nil, fmt.Errorf("region is empty")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, regionKeyInfo+region, 32)
	if err != nil {
		return nil, fmt.Errorf("derive the gossip key of region %s: %w", region, err)
	}
	return key, nil
}

// PanelKey derives from the cluster secret the key that signs the web
// panel's session cookies and CSRF tokens: every node derives the same
// one, so any node accepts a session another signed. Changing the secret
// signs everyone out.
func PanelKey(secret []byte) ([]byte, error) {
	if len(secret) == 0 {
		return nil, fmt.Errorf("cluster secret is empty")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, panelKeyInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("derive panel key: %w", err)
	}
	return key, nil
}

// clusterKeys are the independent subkeys derived from the cluster secret
// (the admin token). The secret itself is never sent or used as a key.
type clusterKeys struct {
	// rpc authenticates node-to-node RPC (hex, as a bearer token).
	rpc []byte
	// gossip encrypts memberlist traffic (an AES-256 key).
	gossip []byte
}

// deriveKeys derives the cluster's subkeys from secret with HKDF-SHA256,
// one info string per purpose.
func deriveKeys(secret []byte) (clusterKeys, error) {
	if len(secret) == 0 {
		return clusterKeys{}, fmt.Errorf("cluster secret is empty")
	}
	rpc, err := hkdf.Key(sha256.New, secret, nil, rpcKeyInfo, 32)
	if err != nil {
		return clusterKeys{}, fmt.Errorf("derive rpc key: %w", err)
	}
	gossip, err := hkdf.Key(sha256.New, secret, nil, gossipKeyInfo, 32)
	if err != nil {
		return clusterKeys{}, fmt.Errorf("derive gossip key: %w", err)
	}
	return clusterKeys{rpc: rpc, gossip: gossip}, nil
}
