package buffer

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// open opens a small buffer in dir.
func open(t *testing.T, dir string, maxBytes int64) *Buffer {
	t.Helper()
	b, err := Open(Options{Dir: dir, MaxBytes: maxBytes, Small: true})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// event makes an event whose id is id, with a message of pad bytes.
func event(id string, pad int) *raftv1.Event {
	return &raftv1.Event{EventId: id, EventType: "ping", Monitor: "m", Status: "run",
		AccountId: "acct", KeyId: "key", ReceivedUnixMs: 1_700_000_000_000, Message: strings.Repeat("x", pad)}
}

// result makes a check result whose check is id, finished at ms.
func result(id string, ms int64) *raftv1.Execution {
	return &raftv1.Execution{CheckUuid: id, Status: "failed", FinishedUnixMs: ms, Error: strings.Repeat("e", 200)}
}

// TestRandomOperations drives buffers with seeded random appends, reads,
// acks and reopens (a close without acking, then an open) against a model:
// every read must return the model's oldest items in order, nothing acked
// comes back, nothing appended is lost, sequence numbers only grow, and the
// counts and bytes survive a reopen.
func TestRandomOperations(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			dir := t.TempDir()
			b := open(t, dir, 1<<30)
			defer func() { b.Close() }()

			type held struct {
				seq uint64
				id  string
			}
			var events, results []held // the model: unacked items, oldest first
			var lastEventSeq, lastResultSeq uint64
			acked := map[string]bool{}
			n := 0
			for op := 0; op < 500; op++ {
				switch r := rng.IntN(100); {
				case r < 40: // append an event
					n++
					id := fmt.Sprint("e", n)
					if err := b.AppendEvent(event(id, rng.IntN(300))); err != nil {
						t.Fatal(err)
					}
					events = append(events, held{id: id})
				case r < 55: // append a result
					n++
					id := fmt.Sprint("r", n)
					if err := b.AppendResult(result(id, int64(n))); err != nil {
						t.Fatal(err)
					}
					results = append(results, held{id: id})
				case r < 75: // read events, maybe ack some of them
					m := 1 + rng.IntN(20)
					got, err := b.Events(m, 0)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != min(m, len(events)) {
						t.Fatalf("op %d: read %d events, %d held", op, len(got), len(events))
					}
					for i, e := range got {
						if acked[e.Event.GetEventId()] {
							t.Fatalf("op %d: event %s read after its ack", op, e.Event.GetEventId())
						}
						if e.Event.GetEventId() != events[i].id {
							t.Fatalf("op %d: read %s at %d, want %s", op, e.Event.GetEventId(), i, events[i].id)
						}
						if events[i].seq == 0 {
							if e.Seq <= lastEventSeq {
								t.Fatalf("op %d: seq %d after %d", op, e.Seq, lastEventSeq)
							}
							lastEventSeq = e.Seq
							events[i].seq = e.Seq
						} else if events[i].seq != e.Seq {
							t.Fatalf("op %d: event %s had seq %d, now %d", op, e.Event.GetEventId(), events[i].seq, e.Seq)
						}
					}
					if len(got) > 0 && rng.IntN(2) == 0 {
						k := rng.IntN(len(got)) + 1
						if err := b.AckEvents(got[k-1].Seq); err != nil {
							t.Fatal(err)
						}
						for _, h := range events[:k] {
							acked[h.id] = true
						}
						events = events[k:]
					}
				case r < 97: // read results, maybe ack them
					m := 1 + rng.IntN(10)
					got, err := b.Results(m, 0)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != min(m, len(results)) {
						t.Fatalf("op %d: read %d results, %d held", op, len(got), len(results))
					}
					for i, e := range got {
						if acked[e.Execution.GetCheckUuid()] || e.Execution.GetCheckUuid() != results[i].id {
							t.Fatalf("op %d: read result %s at %d, want %s", op, e.Execution.GetCheckUuid(), i, results[i].id)
						}
						if results[i].seq == 0 {
							if e.Seq <= lastResultSeq {
								t.Fatalf("op %d: result seq %d after %d", op, e.Seq, lastResultSeq)
							}
							lastResultSeq = e.Seq
							results[i].seq = e.Seq
						}
					}
					if len(got) > 0 && rng.IntN(2) == 0 {
						if err := b.AckResults(got[len(got)-1].Seq); err != nil {
							t.Fatal(err)
						}
						for _, h := range results[:len(got)] {
							acked[h.id] = true
						}
						results = results[len(got):]
					}
				default: // close without acking, reopen
					before := b.Stats()
					if err := b.Close(); err != nil {
						t.Fatal(err)
					}
					b = open(t, dir, 1<<30)
					after := b.Stats()
					if after.Events != before.Events || after.Results != before.Results || after.Bytes != before.Bytes ||
						after.OldestUnixMs != before.OldestUnixMs {
						t.Fatalf("op %d: stats %+v before the reopen, %+v after", op, before, after)
					}
				}
				if s := b.Stats(); s.Events != int64(len(events)) || s.Results != int64(len(results)) {
					t.Fatalf("op %d: stats %+v, model holds %d events %d results", op, s, len(events), len(results))
				}
			}
			// Drain: everything held comes out, in order, once.
			all, err := b.Events(0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != len(events) {
				t.Fatalf("%d events at the end, model holds %d", len(all), len(events))
			}
			for i, e := range all {
				if e.Event.GetEventId() != events[i].id {
					t.Fatalf("end: %s at %d, want %s", e.Event.GetEventId(), i, events[i].id)
				}
			}
			if len(all) > 0 {
				if err := b.AckEvents(all[len(all)-1].Seq); err != nil {
					t.Fatal(err)
				}
			}
			if rest, _ := b.Events(0, 0); len(rest) != 0 {
				t.Fatalf("%d events after acking all", len(rest))
			}
		})
	}
}

// TestSeqMonotonicAfterEmptyReopen: acking everything and reopening does
// not hand out old sequence numbers again (the ack mark is persisted).
func TestSeqMonotonicAfterEmptyReopen(t *testing.T) {
	dir := t.TempDir()
	b := open(t, dir, 0)
	for i := range 5 {
		if err := b.AppendEvent(event(fmt.Sprint(i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := b.Events(0, 0)
	if err := b.AckEvents(got[4].Seq); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b = open(t, dir, 0)
	defer b.Close()
	if err := b.AppendEvent(event("new", 0)); err != nil {
		t.Fatal(err)
	}
	again, _ := b.Events(0, 0)
	if len(again) != 1 || again[0].Seq <= got[4].Seq {
		t.Fatalf("after reopen got %v, want one event with seq > %d", again, got[4].Seq)
	}
	if s := b.Stats(); s.Events != 1 || s.Bytes <= 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestReadLimits: Events stops at max items and at maxBytes, but always
// returns at least one item.
func TestReadLimits(t *testing.T) {
	b := open(t, t.TempDir(), 0)
	defer b.Close()
	for i := range 10 {
		if err := b.AppendEvent(event(fmt.Sprint(i), 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := b.Events(3, 0); len(got) != 3 {
		t.Fatalf("max 3: %d", len(got))
	}
	if got, _ := b.Events(0, 2500); len(got) != 2 {
		t.Fatalf("maxBytes 2500 with 1 KB events: %d", len(got))
	}
	if got, _ := b.Events(0, 10); len(got) != 1 {
		t.Fatalf("maxBytes below one event: %d, want 1", len(got))
	}
}

// TestFullPolicy: results are dropped, oldest first and counted, to make
// room for events and for newer results; events are refused with ErrFull
// only when events fill the buffer; acking makes room again.
func TestFullPolicy(t *testing.T) {
	dir := t.TempDir()
	const max = 8 << 10
	b := open(t, dir, max)
	defer func() { b.Close() }()

	// Results fill the buffer; older ones give way to newer ones.
	for i := range 100 {
		if err := b.AppendResult(result(fmt.Sprint("r", i), int64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	s := b.Stats()
	if s.Bytes > max || s.DroppedResults == 0 || s.Results+int64(s.DroppedResults) != 100 {
		t.Fatalf("after 100 results: %+v", s)
	}
	rs, _ := b.Results(0, 0)
	if rs[len(rs)-1].Execution.GetCheckUuid() != "r99" || rs[0].Execution.GetCheckUuid() != fmt.Sprint("r", s.DroppedResults) {
		t.Fatalf("kept %s..%s, want the newest", rs[0].Execution.GetCheckUuid(), rs[len(rs)-1].Execution.GetCheckUuid())
	}
	if s.OldestUnixMs != int64(s.DroppedResults)+1 {
		t.Fatalf("oldest %d, want the oldest kept result's time %d", s.OldestUnixMs, s.DroppedResults+1)
	}

	// Events take the room of the results, then are refused.
	accepted := 0
	for {
		err := b.AppendEvent(event(fmt.Sprint("e", accepted), 200))
		if errors.Is(err, ErrFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		accepted++
		if accepted > 1000 {
			t.Fatal("the buffer never filled")
		}
	}
	s = b.Stats()
	if s.Results != 0 || s.DroppedResults != 100 || s.RefusedFull != 1 || s.Bytes > max {
		t.Fatalf("after filling with events: %+v", s)
	}
	if err := b.AppendEvent(event("again", 200)); !errors.Is(err, ErrFull) {
		t.Fatalf("second refused append: %v", err)
	}
	// A result still goes in, over the bound by itself at most.
	if err := b.AppendResult(result("late", 1)); err != nil {
		t.Fatal(err)
	}
	if err := b.AppendResult(result("later", 2)); err != nil {
		t.Fatal(err)
	}
	s = b.Stats()
	if s.Results != 1 || s.DroppedResults != 101 || s.RefusedFull != 2 {
		t.Fatalf("results over full events: %+v", s)
	}
	if rs, _ := b.Results(0, 0); len(rs) != 1 || rs[0].Execution.GetCheckUuid() != "later" {
		t.Fatalf("results %v, want only the newest", rs)
	}
	// One result larger than the buffer is refused.
	big := result("big", 3)
	big.Error = strings.Repeat("x", max)
	if err := b.AppendResult(big); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized result: %v", err)
	}

	// Every accepted event is there, in order; acking frees room.
	evs, _ := b.Events(0, 0)
	if len(evs) != accepted {
		t.Fatalf("%d events held, %d accepted", len(evs), accepted)
	}
	if err := b.AckEvents(evs[9].Seq); err != nil {
		t.Fatal(err)
	}
	if err := b.AppendEvent(event("after-ack", 200)); err != nil {
		t.Fatalf("append after an ack: %v", err)
	}
	// The bytes are counted alike after a reopen.
	before := b.Stats()
	b.Close()
	b = open(t, dir, max)
	if after := b.Stats(); after.Bytes != before.Bytes || after.Events != before.Events || after.Results != before.Results {
		t.Fatalf("stats %+v before reopen, %+v after", before, after)
	}
	if err := b.AppendEvent(event("full-again", 20000)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("event larger than the buffer: %v", err)
	}
}

// TestConcurrentAppendsAndDrain: 64 goroutines append while a drainer
// reads and acks batches. Every event is read exactly once, each
// goroutine's events in its order, with growing sequence numbers.
func TestConcurrentAppendsAndDrain(t *testing.T) {
	b := open(t, t.TempDir(), 0)
	defer b.Close()
	// Some appends are slow between taking their number and writing, so
	// later numbers are often written first.
	b.beforeWrite = func(seq uint64) {
		if seq%7 == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	const writers, each = 64, 30
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := b.AppendEvent(event(fmt.Sprintf("g%d-%d", g, i), 50)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	seen := map[string]bool{}
	next := map[int]int{}
	var lastSeq uint64
	drain := func() int {
		got, err := b.Events(50, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range got {
			id := e.Event.GetEventId()
			var g, i int
			fmt.Sscanf(id, "g%d-%d", &g, &i)
			if seen[id] || e.Seq <= lastSeq || i != next[g] {
				t.Fatalf("read %s seq %d (last seq %d, expected index %d, seen %v)", id, e.Seq, lastSeq, next[g], seen[id])
			}
			seen[id], next[g], lastSeq = true, i+1, e.Seq
		}
		if len(got) > 0 {
			if err := b.AckEvents(got[len(got)-1].Seq); err != nil {
				t.Fatal(err)
			}
		}
		return len(got)
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			drain()
		}
	}
	for drain() > 0 {
	}
	if len(seen) != writers*each {
		t.Fatalf("read %d events, appended %d", len(seen), writers*each)
	}
	if s := b.Stats(); s.Events != 0 || s.Bytes != 0 || s.OldestUnixMs != 0 {
		t.Fatalf("stats after draining: %+v", s)
	}
	// Concurrent appends shared transactions (and so fsyncs).
	if txns := b.commits.txns.Load(); txns >= writers*each {
		t.Fatalf("%d appends in %d transactions: no group commit", writers*each, txns)
	}
	t.Logf("%d appends in %d transactions", writers*each, b.commits.txns.Load())
}

// TestReadWaitsForEarlierAppends: an event whose append returned is not
// read (nor acked) while an event with a lower sequence number is still
// being written, so events are never read out of order.
func TestReadWaitsForEarlierAppends(t *testing.T) {
	b := open(t, t.TempDir(), 0)
	defer b.Close()
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	defer open() // before Close, which waits for the append
	b.beforeWrite = func(seq uint64) {
		if seq == 1 {
			<-release
		}
	}
	first := make(chan error)
	go func() { first <- b.AppendEvent(event("first", 0)) }()
	for { // wait until the first append holds seq 1
		b.mu.Lock()
		n := len(b.events.inflight)
		b.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := b.AppendEvent(event("second", 0)); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Events(0, 0); len(got) != 0 {
		t.Fatalf("read %d events while seq 1 is being written", len(got))
	}
	if err := b.AckEvents(2); err != nil {
		t.Fatal(err)
	}
	open()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	got, _ := b.Events(0, 0)
	if len(got) != 2 || got[0].Event.GetEventId() != "first" || got[1].Event.GetEventId() != "second" {
		t.Fatalf("read %v, want first then second (an ack past an unwritten event deletes nothing)", got)
	}
}

// TestGroupLargerThanATransaction: a group of writes larger than one
// Badger transaction is split over several, and every write is answered
// and stored.
func TestGroupLargerThanATransaction(t *testing.T) {
	b := open(t, t.TempDir(), 0)
	defer b.Close()
	const n = 20000 // a small database takes a few thousand entries a transaction
	value, err := proto.Marshal(event("x", 0))
	if err != nil {
		t.Fatal(err)
	}
	var group []write
	for i := range n {
		group = append(group, write{key: itemKey(prefixEvent, uint64(i+1), 0, len(value)),
			value: value, done: make(chan error, 1)})
	}
	b.commits.write(group)
	for i, w := range group {
		if err := <-w.done; err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if txns := b.commits.txns.Load(); txns < 2 {
		t.Fatalf("%d entries in %d transaction(s)", n, txns)
	}
	b.mu.Lock()
	b.events.next = n + 1
	b.mu.Unlock()
	if got, err := b.Events(0, 0); err != nil || len(got) != n {
		t.Fatalf("%d stored (%v), want %d", len(got), err, n)
	}
}
