package state

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestPruneEventsOfManyMonitorsIsBounded: pruning by age rewrites the
// record of every monitor it takes an event from; 1,024 events of 1,024
// monitors of about 1 KB each made one entry too big for a transaction
// (every node panicked at every replay). One entry takes the events of at
// most MaxPruneMonitors monitors and says max, so the leader proposes
// again until all are gone.
func TestPruneEventsOfManyMonitorsIsBounded(t *testing.T) {
	t.Parallel() // heavy: overlaps the package's other heavy tests
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	const n = MaxPruneEvents
	for b := 0; b < n; b += 100 {
		specs := minimalPings(min(100, n-b))
		for i, m := range specs {
			m.Uuid = fmt.Sprintf("00000000-0000-4000-8000-%012d", b+i)
			m.Name = fmt.Sprint("job-", b+i)
			m.DisplayName = strings.Repeat("d", 800) // inline in a Small store
		}
		mustOK(t, s, putMonitorsCmd("a", specs, nil))
	}
	for b := 0; b < n; b += IngestBatchMaxEvents {
		var evs []*raftv1.Event
		for i := b; i < b+IngestBatchMaxEvents; i++ {
			evs = append(evs, ping("a", fmt.Sprint("job-", i), "complete", t0))
		}
		ingestOK(t, s, ingestAt(t0, 0, evs...))
	}
	m := mustMonitor(t, s, "a", "job-0")
	if size := proto.Size(m); size > 1000 || m.GetPing().GetEvents() != 1 {
		t.Fatalf("monitor record of %d bytes, %d events", size, m.GetPing().GetEvents())
	}
	rounds := 0
	for {
		res := apply(t, s, pruneEvents(t0+1, MaxPruneEvents))[0]
		got := int(res.GetDeleted())
		if res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("prune: %v %s", res.GetStatus(), res.GetMessage())
		}
		rounds++
		if got < MaxPruneEvents {
			break
		}
	}
	if want := n / MaxPruneMonitors; rounds != want {
		t.Errorf("%d rounds, want %d", rounds, want)
	}
	if left := keysWithPrefix(t, s, prefixEvent); len(left) != 0 {
		t.Fatalf("%d events left", len(left))
	}
	if left := keysWithPrefix(t, s, prefixEventDue); len(left) != 0 {
		t.Fatalf("%d ev-due: keys left", len(left))
	}
	for _, i := range []int{0, n / 2, n - 1} {
		if m := mustMonitor(t, s, "a", fmt.Sprint("job-", i)); m.GetPing().GetEvents() != 0 {
			t.Errorf("monitor %d counts %d events", i, m.GetPing().GetEvents())
		}
	}
}
