package state

import (
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Builders of ingest commands and events.

const (
	stored    = raftv1.EventOutcome_EVENT_OUTCOME_STORED
	duplicate = raftv1.EventOutcome_EVENT_OUTCOME_DUPLICATE
	limited   = raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_LIMIT
	suspended = raftv1.EventOutcome_EVENT_OUTCOME_SUSPENDED
	noOutcome = raftv1.EventOutcome_EVENT_OUTCOME_UNSPECIFIED
)

const (
	second = int64(1000)
	hour   = 3600 * second
	day    = 24 * hour
)

// ping is a ping event of acct's monitor mon received at ms; opts adjust it.
func ping(acct, mon, status string, ms int64, opts ...func(*raftv1.Event)) *raftv1.Event {
	ev := &raftv1.Event{AccountId: acct, Monitor: mon, EventType: "ping", Status: status, ReceivedUnixMs: ms}
	for _, o := range opts {
		o(ev)
	}
	return ev
}

func series(s string) func(*raftv1.Event)   { return func(e *raftv1.Event) { e.Series = s } }
func eventID(id string) func(*raftv1.Event) { return func(e *raftv1.Event) { e.EventId = id } }
func project(p string) func(*raftv1.Event)  { return func(e *raftv1.Event) { e.Project = p } }
func timestamp(sec int64) func(*raftv1.Event) {
	return func(e *raftv1.Event) { e.Timestamp = proto.Int64(sec) }
}
func duration(d float64) func(*raftv1.Event) {
	return func(e *raftv1.Event) { e.Duration = proto.Float64(d) }
}

// ingestAt is an IngestBatch command stamped now.
func ingestAt(now, retention int64, evs ...*raftv1.Event) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{Events: evs, RetentionCount: retention}}})
}

func ingestNow(evs ...*raftv1.Event) *raftv1.Command { return ingestAt(t0, 0, evs...) }

// ingestOK applies one IngestBatch and returns its event results.
func ingestOK(t *testing.T, s *Store, c *raftv1.Command) []*raftv1.EventResult {
	t.Helper()
	res := apply(t, s, c)[0]
	if res.GetStatus() != raftv1.Status_STATUS_OK || len(res.GetEvents()) != len(c.GetIngestBatch().GetEvents()) {
		t.Fatalf("ingest: %v %s, %d results", res.GetStatus(), res.GetMessage(), len(res.GetEvents()))
	}
	return res.GetEvents()
}

// outcomes lists the outcomes of results.
func outcomes(rs []*raftv1.EventResult) []raftv1.EventOutcome {
	out := make([]raftv1.EventOutcome, len(rs))
	for i, r := range rs {
		out[i] = r.GetOutcome()
	}
	return out
}

func requireOutcomes(t *testing.T, rs []*raftv1.EventResult, want ...raftv1.EventOutcome) {
	t.Helper()
	got := outcomes(rs)
	if len(got) != len(want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("outcomes %v, want %v", got, want)
		}
	}
}

func pruneEvents(before, maxN int64) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_PruneEvents{PruneEvents: &raftv1.PruneEvents{BeforeUnixMs: before, Max: maxN}}})
}

// pruned applies a PruneEvents and returns how many it deleted.
func pruned(t *testing.T, s *Store, before, maxN int64) int {
	t.Helper()
	res := apply(t, s, pruneEvents(before, maxN))[0]
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("prune: %v %q", res.GetStatus(), res.GetMessage())
	}
	return int(res.GetDeleted())
}

func deleteMonitor(acct, id string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_DeleteMonitor{DeleteMonitor: &raftv1.DeleteMonitor{AccountId: acct, MonitorUuid: id}}})
}

// limits is a plan with the given limits (nil: none) and grace.
func limits(monitors, events *int64, graceSeconds int64) *raftv1.Plan {
	p := plan("limited")
	p.MonitorLimit, p.MonthlyEventLimit, p.QuotaGraceSeconds = monitors, events, graceSeconds
	return p
}

func mustMonitor(t *testing.T, s *Store, acct, name string) *statev1.Monitor {
	t.Helper()
	m, err := s.MonitorByName(acct, KindPing, name)
	if err != nil {
		t.Fatalf("monitor %s/%s: %v", acct, name, err)
	}
	return m
}

func mustEvents(t *testing.T, s *Store, acct, id string, limit int) []*statev1.StoredEvent {
	t.Helper()
	evs, err := s.Events(acct, id, limit)
	if err != nil {
		t.Fatalf("events of %s: %v", id, err)
	}
	return evs
}

// seqs lists the seqs of evs.
func seqs(evs []*statev1.StoredEvent) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = e.GetSeq()
	}
	return out
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
