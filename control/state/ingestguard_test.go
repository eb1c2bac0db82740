package state

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

const (
	unauthorized = raftv1.EventOutcome_EVENT_OUTCOME_UNAUTHORIZED
	rateLimited  = raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_RATE
)

func withKey(id string) func(*raftv1.Event) { return func(e *raftv1.Event) { e.KeyId = id } }

// TestIngestRevokedKeyRefused: the state machine checks each event's key
// again when it applies the batch, so an event authenticated by a node that
// had not applied the revocation yet is refused and changes nothing.
func TestIngestRevokedKeyRefused(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"))
	rs := ingestOK(t, s, ingestNow(ping("a", "job", "run", t0, withKey("ik"))))
	requireOutcomes(t, rs, stored)

	mustOK(t, s, revokeKey("a", "ik"))
	before := dumpKV(t, s, false)
	rs = ingestOK(t, s, ingestAt(t0+second, 0,
		ping("a", "job", "complete", t0+second, withKey("ik"), eventID("e1")), // revoked
		ping("a", "new-job", "run", t0+second, withKey("ik")),                 // revoked, would create a monitor
		ping("a", "job", "run", t0+second, withKey("mk")),                     // a management key
		ping("a", "job", "run", t0+second, withKey("nope")),                   // no such key
	))
	requireOutcomes(t, rs, unauthorized, unauthorized, unauthorized, unauthorized)
	for _, r := range rs {
		if r.GetQuota() != nil || r.GetMonitorUuid() != "" {
			t.Errorf("refused event answered %v", r)
		}
	}
	// Nothing changed: no event, no monitor, no quota count, no event id.
	requireSameKV(t, before, dumpKV(t, s, false))
	// Another account's key of the same id is its own.
	requireOutcomes(t, ingestOK(t, s, ingestNow(ping("b", "job", "run", t0, withKey("ik"), eventID("e1")))), stored)

	// A key of another account does not open account a.
	mustOK(t, s, createKey(key("b", "ik2", raftv1.KeyType_KEY_TYPE_INGEST)))
	rs = ingestOK(t, s, ingestNow(ping("a", "job", "run", t0, withKey("ik2")), ping("b", "job", "run", t0, withKey("ik2"))))
	requireOutcomes(t, rs, unauthorized, stored)

	// Entries written before events carried a key id apply as they did.
	rs = ingestOK(t, s, ingestNow(ping("a", "job", "run", t0)))
	requireOutcomes(t, rs, stored)
}

// TestIngestMonitorCreationRate: pings create at most the plan's
// monitors_created_per_minute monitors in one minute of leader time (60
// when the plan does not say); events of existing monitors are never held
// back, and the next minute allows more.
func TestIngestMonitorCreationRate(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"))
	p := plan("guarded")
	p.MonitorsCreatedPerMinute = proto.Int64(3)
	mustOK(t, s, setPlan("a", p))

	minute := (t0/minuteMillis + 1) * minuteMillis // the start of a minute
	at := func(ms int64, names ...string) []*raftv1.EventResult {
		var evs []*raftv1.Event
		for _, n := range names {
			evs = append(evs, ping("a", n, "run", ms))
		}
		return ingestOK(t, s, ingestAt(ms, 0, evs...))
	}
	requireOutcomes(t, at(minute, "m1", "m2", "m1", "m3", "m4"), stored, stored, stored, stored, rateLimited)
	requireOutcomes(t, at(minute+59_999, "m5", "m1"), rateLimited, stored)
	if _, err := s.MonitorByName("a", KindPing, "m4"); err == nil {
		t.Fatal("a refused creation made a monitor")
	}
	requireOutcomes(t, at(minute+minuteMillis, "m4", "m5", "m6", "m7"), stored, stored, stored, rateLimited)

	// The default: 60 a minute.
	var evs []*raftv1.Event
	for i := range DefaultMonitorsCreatedPerMinute + 2 {
		evs = append(evs, ping("b", fmt.Sprintf("job-%d", i), "run", minute))
	}
	rs := ingestOK(t, s, ingestAt(minute, 0, evs...))
	for i, r := range rs {
		want := stored
		if i >= DefaultMonitorsCreatedPerMinute {
			want = rateLimited
		}
		if r.GetOutcome() != want {
			t.Fatalf("event %d: %v, want %v", i, r.GetOutcome(), want)
		}
	}
}
