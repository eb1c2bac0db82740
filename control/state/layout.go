package state

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// The key layout. Every key starts with an entity prefix; ids are UUID
// strings and so never contain the ':' separator; hashes are raw bytes at
// the end of a key; numbers are big-endian so they sort.
//
//	meta:applied                        -> uint64, last applied raft index
//	acct:<account id>                   -> statev1.Account
//	acct-email:<lower-case e-mail>      -> account id
//	key:<sha-256 of the secret>         -> raftv1.Key
//	key-id:<account id>:<key id>        -> sha-256 of the secret
//	group:<account id>:<group id>       -> statev1.NotificationGroup
//	group-name:<account id>:<name>      -> group id
//	agent-token:<sha-256 of the token>  -> statev1.AgentToken
//	req:<request id>                    -> statev1.AppliedRequest
//	req-time:<uint64 ms><request id>    -> empty; expiry order of req:
var (
	keyApplied       = []byte("meta:applied")
	prefixAccount    = []byte("acct:")
	prefixEmail      = []byte("acct-email:")
	prefixKeyHash    = []byte("key:")
	prefixKeyID      = []byte("key-id:")
	prefixGroup      = []byte("group:")
	prefixGroupName  = []byte("group-name:")
	prefixAgentToken = []byte("agent-token:")
	prefixRequest    = []byte("req:")
	prefixReqTime    = []byte("req-time:")
)

// k joins a prefix and parts with ':' between the parts.
func k(prefix []byte, parts ...string) []byte {
	n := len(prefix)
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, prefix...)
	for i, p := range parts {
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, p...)
	}
	return b
}

// kb appends raw bytes to a prefix.
func kb(prefix, raw []byte) []byte {
	return append(append(make([]byte, 0, len(prefix)+len(raw)), prefix...), raw...)
}

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func readUint64(txn *badger.Txn, key []byte) (uint64, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var v uint64
	err = item.Value(func(b []byte) error {
		if len(b) != 8 {
			return fmt.Errorf("key %q: want 8 bytes, have %d", key, len(b))
		}
		v = binary.BigEndian.Uint64(b)
		return nil
	})
	return v, err
}
