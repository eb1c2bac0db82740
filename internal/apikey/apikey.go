// Package apikey makes and hashes the secrets Lookout hands out: ingest keys
// (ck_), management keys (mk_), agent tokens (at_) and the secrets of
// invitation links (iv_).
//
// A secret is a prefix followed by 32 random bytes in lower-case base32
// without padding (256 bits). Only its SHA-256 hash is stored; the secret is
// shown once, when it is made. A plain hash (not bcrypt) is enough because
// the secret is random, and it lets every request be authenticated with one
// lookup by hash.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
)

// The prefixes of the kinds of secret.
const (
	// Ingest keys authenticate pings.
	Ingest = "ck_"
	// Management keys authenticate the Management API.
	Management = "mk_"
	// Agent tokens authenticate edge agents.
	Agent = "at_"
	// Invite secrets make an invitation link to an account.
	Invite = "iv_"
)

// randomBytes is the number of random bytes in a secret.
const randomBytes = 32

// New makes a secret with the given prefix and returns it with its hash.
func New(prefix string) (secret string, hash []byte, err error) {
	b := make([]byte, randomBytes)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("read random bytes: %w", err)
	}
	// Lower-case base32 without padding: safe in URLs, headers and shells.
	secret = prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
	return secret, Hash(secret), nil
}

// Hash returns the SHA-256 hash of secret, the form in which it is stored
// and looked up.
func Hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
