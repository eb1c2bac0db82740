package state

import (
	"errors"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// checkNewKey returns a non-nil result when key cannot be stored.
func checkNewKey(txn *badger.Txn, key *raftv1.Key) (*raftv1.Result, error) {
	if key.GetId() == "" || len(key.GetHash()) == 0 || key.GetType() == raftv1.KeyType_KEY_TYPE_UNSPECIFIED {
		return invalid("key: id, hash and type are required"), nil
	}
	if taken, err := exists(txn, kb(prefixKeyHash, key.GetHash())); err != nil || taken {
		return conflict("key hash already in use"), err
	}
	if taken, err := exists(txn, k(prefixKeyID, key.GetAccountId(), key.GetId())); err != nil || taken {
		return conflict("key %s exists", key.GetId()), err
	}
	return nil, nil
}

// putKey stores key, made at nowMs (the command's time), and its id index.
func putKey(txn *badger.Txn, key *raftv1.Key, nowMs int64) error {
	key = proto.Clone(key).(*raftv1.Key) // the command's stays as it was proposed
	key.CreatedUnixMs = nowMs
	if err := setProto(txn, kb(prefixKeyHash, key.GetHash()), key); err != nil {
		return err
	}
	return txn.Set(k(prefixKeyID, key.GetAccountId(), key.GetId()), key.GetHash())
}

// applyCreateKey adds a named key to an existing account.
func applyCreateKey(txn *badger.Txn, nowMs int64, key *raftv1.Key) (*raftv1.Result, error) {
	_, refused, err := readAccount(txn, key.GetAccountId())
	if refused != nil || err != nil {
		return refused, err
	}
	if res, err := checkNewKey(txn, key); res != nil || err != nil {
		return res, err
	}
	return ok(), putKey(txn, key, nowMs)
}

// applyRevokeKey deletes a key of an account, with its last use.
func applyRevokeKey(txn *badger.Txn, values *valueCache, c *raftv1.RevokeKey) (*raftv1.Result, error) {
	idKey := k(prefixKeyID, c.GetAccountId(), c.GetKeyId())
	hash, err := getRaw(txn, idKey)
	if errors.Is(err, ErrNotFound) {
		return notFound("key %s not found", c.GetKeyId()), nil
	}
	if err != nil {
		return nil, err
	}
	if err := txn.Delete(kb(prefixKeyHash, hash)); err != nil {
		return nil, err
	}
	if err := values.del(txn, keyUsedKey(c.GetAccountId(), c.GetKeyId())); err != nil {
		return nil, err
	}
	return ok(), txn.Delete(idKey)
}

// KeyByHash returns the key whose secret hashes to hash. It is the lookup
// every authenticated request makes, served from the local state.
// The answer may be shared with other callers: do not modify it.
func (s *Store) KeyByHash(hash []byte) (*raftv1.Key, error) {
	if k, ok := s.auth.key(hash); ok {
		return k, nil
	}
	gen := s.auth.generation()
	var key raftv1.Key
	err := s.view(func(txn *badger.Txn) error { return getProto(txn, kb(prefixKeyHash, hash), &key) })
	if err != nil {
		return nil, err
	}
	s.auth.putKey(gen, hash, &key)
	return &key, nil
}

// Keys returns the keys of an account in id order.
func (s *Store) Keys(accountID string) ([]*raftv1.Key, error) {
	var out []*raftv1.Key
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: k(prefixKeyID, accountID, ""), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			hash, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			var key raftv1.Key
			if err := getProto(txn, kb(prefixKeyHash, hash), &key); err != nil {
				return err
			}
			out = append(out, &key)
		}
		return nil
	})
	return out, err
}
