package apikey

import (
	"bytes"
	"crypto/sha256"
	"regexp"
	"testing"
)

func TestNew(t *testing.T) {
	for _, prefix := range []string{Ingest, Management, Agent} {
		t.Run(prefix, func(t *testing.T) {
			secret, hash, err := New(prefix)
			if err != nil {
				t.Fatal(err)
			}
			// 32 bytes are 256 bits: 52 base32 characters without padding.
			want := regexp.MustCompile(`^` + prefix + `[a-z2-7]{52}$`)
			if !want.MatchString(secret) {
				t.Errorf("secret %q does not match %s", secret, want)
			}
			if !bytes.Equal(hash, Hash(secret)) {
				t.Errorf("hash %x is not Hash(secret) %x", hash, Hash(secret))
			}
		})
	}
}

func TestNewIsRandom(t *testing.T) {
	seen := make(map[string]bool)
	for range 100 {
		secret, _, err := New(Ingest)
		if err != nil {
			t.Fatal(err)
		}
		if seen[secret] {
			t.Fatalf("secret %q made twice", secret)
		}
		seen[secret] = true
	}
}

func TestHash(t *testing.T) {
	want := sha256.Sum256([]byte("ck_abc"))
	if got := Hash("ck_abc"); !bytes.Equal(got, want[:]) {
		t.Errorf("Hash = %x, want %x", got, want)
	}
	if bytes.Equal(Hash("ck_abc"), Hash("ck_abd")) {
		t.Error("different secrets hash the same")
	}
}
