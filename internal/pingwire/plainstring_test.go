package pingwire

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestPlainStringAgreesWithJSON: whenever the fast path takes a literal,
// encoding/json decodes it to the same string; literals with escapes,
// non-ASCII or control bytes are left to encoding/json.
func TestPlainStringAgreesWithJSON(t *testing.T) {
	for _, lit := range []string{`""`, `"backup done"`, `"a\"b"`, `"a\\b"`, `"a\nb"`, `"caf\u00e9"`, `"café"`, "\"a\tb\"", `"~!@#$%^&*()_+{}|:<>?"`, `x`, `"`, `"abc`, `null`, `12`} {
		s, ok := plainString(json.RawMessage(lit))
		var want string
		err := json.Unmarshal([]byte(lit), &want)
		if ok && (err != nil || s != want) {
			t.Errorf("%s: fast path %q, encoding/json %q (%v)", lit, s, want, err)
		}
		if !ok && lit == `"backup done"` {
			t.Errorf("%s: not taken by the fast path", lit)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	taken := 0
	for range 20000 {
		b := []byte{'"'}
		for range r.IntN(12) {
			b = append(b, byte(r.IntN(256)>>r.IntN(2)))
		}
		b = append(b, '"')
		s, ok := plainString(b)
		if !ok {
			continue
		}
		taken++
		var want string
		if err := json.Unmarshal(b, &want); err != nil || s != want {
			t.Fatalf("%q: fast path %q, encoding/json %q (%v)", b, s, want, err)
		}
	}
	if taken < 1000 {
		t.Fatalf("the fast path took only %d of the random literals", taken)
	}
}
