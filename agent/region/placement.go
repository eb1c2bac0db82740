package region

import (
	"hash/fnv"
	"slices"
)

// Which live member runs each check.

// Owner returns the id of the live member that runs check checkID,
// among the members of tokens (empty: every member).
func (p *Pool) Owner(checkID string, tokens []string) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return Owner(checkID, tokens, p.members)
}

// Owns reports whether this agent runs check checkID, served by tokens.
func (p *Pool) Owns(checkID string, tokens []string) bool {
	return p.Owner(checkID, tokens) == p.o.ID
}

// Owner returns the id of the member of members that wins the rendezvous
// hash of checkID among those whose TokenID is in tokens (every member
// when tokens is empty: assignments kept from before checks named their
// tokens), "" when there is none.
func Owner(checkID string, tokens []string, members []Member) string {
	best, bestW := "", uint64(0)
	for _, m := range members {
		if len(tokens) > 0 && !slices.Contains(tokens, m.TokenID) {
			continue
		}
		if w := weight(checkID, m.ID); best == "" || w > bestW || w == bestW && m.ID < best {
			best, bestW = m.ID, w
		}
	}
	return best
}

// weight is the rendezvous weight of (check, member): FNV-1a of both,
// separated by a zero byte, through a 64-bit finalizer (splitmix64) so
// ids that differ in one character spread evenly.
func weight(checkID, memberID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(checkID))
	h.Write([]byte{0})
	h.Write([]byte(memberID))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
