package engine

import (
	"strings"

	"github.com/google/uuid"

	"lookout/internal/pingstate"
)

// monKey is a monitor's uuid in 16 bytes (a uuid string would take 64).
type monKey [16]byte

// Deadline kinds as heap items store them.
const (
	kindTimeout uint8 = iota
	kindLate
	kindMissed
	// kindQuiet is when a monitor of any kind must be judged afresh
	// (JudgeAfresh: a pause's until, a held alert whose gate opens, a
	// reminder; quiet.go).
	kindQuiet
	numKinds
)

// kindNames are the ping kinds as FireDeadline names them.
var kindNames = [...]string{kindTimeout: pingstate.DeadlineTimeout, kindLate: pingstate.DeadlineLate, kindMissed: pingstate.DeadlineMissed}

// slot names one deadline: a monitor and a kind.
type slot struct {
	id   monKey
	kind uint8
}

// item is one scheduled deadline, 32 bytes.
type item struct {
	id   monKey
	due  int64  // Unix ms
	acct uint32 // index in the engine's account table
	kind uint8
}

// deadlineHeap is a min-heap of deadlines by due time that knows where
// each (monitor, kind) sits, so a monitor's deadlines are replaced or
// removed in O(log n) when it changes. Written by hand rather than with
// container/heap, whose Push boxes every item.
type deadlineHeap struct {
	items []item
	pos   map[monKey][numKinds]int32 // index+1 of the monitor's item per kind; 0: none
}

func newDeadlineHeap() *deadlineHeap {
	return &deadlineHeap{pos: map[monKey][numKinds]int32{}}
}

// Len is the number of scheduled deadlines.
func (h *deadlineHeap) Len() int { return len(h.items) }

// peek returns the earliest deadline.
func (h *deadlineHeap) peek() (item, bool) {
	if len(h.items) == 0 {
		return item{}, false
	}
	return h.items[0], true
}

// set schedules the deadline of kind of monitor id at due, replacing the
// one it had; due 0 removes it.
func (h *deadlineHeap) set(id monKey, kind uint8, acct uint32, due int64) {
	i := int(h.pos[id][kind]) - 1
	switch {
	case due == 0 && i >= 0:
		h.removeAt(i)
	case due == 0:
	case i >= 0:
		h.items[i].due, h.items[i].acct = due, acct
		if !h.down(i) {
			h.up(i)
		}
	default:
		h.items = append(h.items, item{id: id, due: due, acct: acct, kind: kind})
		h.place(len(h.items) - 1)
		h.up(len(h.items) - 1)
	}
}

// remove drops every deadline of monitor id.
func (h *deadlineHeap) remove(id monKey) {
	for kind := range numKinds {
		h.set(id, kind, 0, 0)
	}
}

// pop removes and returns the earliest deadline.
func (h *deadlineHeap) pop() item {
	it := h.items[0]
	h.removeAt(0)
	return it
}

// reset forgets every deadline.
func (h *deadlineHeap) reset() {
	h.items = h.items[:0]
	clear(h.pos)
}

func (h *deadlineHeap) removeAt(i int) {
	last := len(h.items) - 1
	it := h.items[i]
	if i != last {
		h.swap(i, last)
	}
	h.items = h.items[:last]
	p := h.pos[it.id]
	p[it.kind] = 0
	if p == [numKinds]int32{} {
		delete(h.pos, it.id)
	} else {
		h.pos[it.id] = p
	}
	if i != last && !h.down(i) {
		h.up(i)
	}
}

// place records where item i sits.
func (h *deadlineHeap) place(i int) {
	it := &h.items[i]
	p := h.pos[it.id]
	p[it.kind] = int32(i + 1)
	h.pos[it.id] = p
}

func (h *deadlineHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.place(i)
	h.place(j)
}

func (h *deadlineHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if h.items[parent].due <= h.items[i].due {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

// down sinks item i; it reports whether it moved.
func (h *deadlineHeap) down(i int) bool {
	start, n := i, len(h.items)
	for {
		least := 2*i + 1
		if least >= n {
			break
		}
		if r := least + 1; r < n && h.items[r].due < h.items[least].due {
			least = r
		}
		if h.items[i].due <= h.items[least].due {
			break
		}
		h.swap(i, least)
		i = least
	}
	return i > start
}

// oddNamespace derives keys for monitor ids that are not canonical uuid
// strings (none are made today; the state does not forbid them).
var oddNamespace = uuid.MustParse("9b1f3c52-7d0e-4c8a-b6f1-2e5d8a4c7f03")

// names turns monitor ids into keys and back, and account ids into small
// numbers: heap items stay 32 bytes instead of carrying two strings.
type names struct {
	accts   []string
	acctIdx map[string]uint32
	odd     map[monKey]string // keys of non-canonical ids
}

func newNames() *names {
	return &names{acctIdx: map[string]uint32{}, odd: map[monKey]string{}}
}

// key returns the key of monitor id.
func (n *names) key(id string) monKey {
	if u, err := uuid.Parse(id); err == nil && len(id) == 36 && !strings.ContainsAny(id, "ABCDEF") {
		return monKey(u) // canonical: uuid.UUID.String gives id back
	}
	k := monKey(uuid.NewSHA1(oddNamespace, []byte(id)))
	n.odd[k] = id
	return k
}

// id returns the monitor id of key k.
func (n *names) id(k monKey) string {
	if id, ok := n.odd[k]; ok {
		return id
	}
	return uuid.UUID(k).String()
}

// acct interns an account id.
func (n *names) acct(id string) uint32 {
	i, ok := n.acctIdx[id]
	if !ok {
		i = uint32(len(n.accts))
		n.accts = append(n.accts, id)
		n.acctIdx[id] = i
	}
	return i
}
