package state

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestIngestCreatesMonitorsUpToTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit *int64
		evs   []string // monitor names, in one batch
		want  []raftv1.EventOutcome
		count int64
	}{
		{"no limit", nil, []string{"a", "b", "c"}, []raftv1.EventOutcome{stored, stored, stored}, 3},
		{"limit 2: third name refused, existing names still accepted", proto.Int64(2),
			[]string{"a", "b", "c", "a", "b", "c"}, []raftv1.EventOutcome{stored, stored, limited, stored, stored, limited}, 2},
		{"limit 0", proto.Int64(0), []string{"a"}, []raftv1.EventOutcome{limited}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			mustOK(t, s, newAccount("acct"), newAccount("other"), setPlan("acct", limits(tc.limit, nil, 0)))
			var evs []*raftv1.Event
			for i, n := range tc.evs {
				evs = append(evs, ping("acct", n, "complete", t0+int64(i)))
			}
			rs := ingestOK(t, s, ingestAt(t0+5, 0, evs...))
			requireOutcomes(t, rs, tc.want...)
			if n, err := s.MonitorCount("acct"); err != nil || n != tc.count {
				t.Errorf("MonitorCount = %d, %v; want %d", n, err, tc.count)
			}
			for i, r := range rs {
				if r.GetOutcome() != stored {
					if r.GetMonitorUuid() != "" {
						t.Errorf("event %d: refused event names monitor %s", i, r.GetMonitorUuid())
					}
					if _, err := s.MonitorByName("acct", KindPing, tc.evs[i]); err == nil {
						t.Errorf("event %d: refused name %s was created", i, tc.evs[i])
					}
					continue
				}
				m := mustMonitor(t, s, "acct", tc.evs[i])
				if m.GetUuid() != r.GetMonitorUuid() {
					t.Errorf("event %d: result uuid %s, monitor %s", i, r.GetMonitorUuid(), m.GetUuid())
				}
				if _, err := uuid.Parse(m.GetUuid()); err != nil || strings.Contains(m.GetUuid(), ":") {
					t.Errorf("uuid %q: %v", m.GetUuid(), err)
				}
				if m.GetKind() != KindPing || !m.GetEnabled() || m.GetTimeoutSeconds() != 3600 ||
					m.ExpectedIntervalSeconds != nil || m.GetCreatedUnixMs() != t0+5 || m.GetAccountId() != "acct" {
					t.Errorf("created monitor %v", m)
				}
				if got, err := s.Monitor("acct", m.GetUuid()); err != nil || !proto.Equal(got, m) {
					t.Errorf("Monitor(uuid) = %v, %v", got, err)
				}
				_, err := s.Monitor("other", m.GetUuid())
				requireNotFound(t, "another account's monitor", err)
			}
			mons, err := s.Monitors("acct")
			if err != nil || int64(len(mons)) != tc.count {
				t.Fatalf("Monitors: %d, %v", len(mons), err)
			}
			for i := 1; i < len(mons); i++ {
				if mons[i-1].GetName() >= mons[i].GetName() {
					t.Errorf("Monitors not in name order: %s, %s", mons[i-1].GetName(), mons[i].GetName())
				}
			}
			if n, _ := s.MonitorCount("other"); n != 0 {
				t.Errorf("other account counts %d monitors", n)
			}
		})
	}
}

func TestMonitorUUIDs(t *testing.T) {
	a, b := newMonitorUUID(7, 0, "acct", "job"), newMonitorUUID(7, 0, "acct", "job")
	if a != b {
		t.Fatal("the same entry and position give different uuids")
	}
	seen := map[string]bool{a: true}
	for _, u := range []string{
		newMonitorUUID(7, 1, "acct", "job"), newMonitorUUID(8, 0, "acct", "job"),
		newMonitorUUID(7, 0, "acct2", "job"), newMonitorUUID(7, 0, "acct", "job2"),
		newMonitorUUID(70, 0, "acct", "job"), newMonitorUUID(7, 10, "acct", "job"),
	} {
		if seen[u] {
			t.Fatalf("uuid %s repeats", u)
		}
		seen[u] = true
	}
}

func TestIngestProjects(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"), newAccount("other"))
	odd := "Team: A/nightly ✓ " + strings.Repeat("x", 80) // any characters, 100 chars
	steps := []struct {
		ev   *raftv1.Event
		want string // the monitor's project after the event
	}{
		{ping("acct", "job", "run", t0), ""},
		{ping("acct", "job", "complete", t0+1, project(odd)), odd},
		{ping("acct", "job", "run", t0+2), odd}, // no project: stays
		{ping("acct", "job", "complete", t0+3, project("backups")), "backups"},
		{ping("other", "job", "run", t0+4, project("theirs")), "backups"}, // another account
	}
	for i, st := range steps {
		ingestOK(t, s, ingestNow(st.ev))
		if got := mustMonitor(t, s, "acct", "job").GetProject(); got != st.want {
			t.Fatalf("step %d: project %q, want %q", i, got, st.want)
		}
	}
}

func TestDeleteMonitor(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"), newAccount("other"))
	ingestOK(t, s, ingestNow(
		ping("acct", "job", "run", t0, series("s1")),
		ping("acct", "job", "run", t0+1),
		ping("acct", "job", "complete", t0+2),
		ping("acct", "keep", "run", t0+3),
		ping("other", "job", "run", t0+4),
	))
	job, keep := mustMonitor(t, s, "acct", "job"), mustMonitor(t, s, "acct", "keep")
	before := dumpKV(t, s, false)
	for _, c := range []*raftv1.Command{deleteMonitor("other", job.GetUuid()), deleteMonitor("acct", "no-such-uuid")} {
		if res := apply(t, s, c)[0]; res.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
			t.Fatalf("delete %v: %v", c.GetDeleteMonitor(), res)
		}
	}
	requireSameKV(t, before, dumpKV(t, s, false))

	mustOK(t, s, deleteMonitor("acct", job.GetUuid()))
	for key := range dumpKV(t, s, true) {
		if strings.Contains(key, job.GetUuid()) || strings.HasPrefix(key, "mon-name:acct:ping:job") {
			t.Errorf("key %q left after delete", key)
		}
	}
	if n, _ := s.MonitorCount("acct"); n != 1 {
		t.Errorf("MonitorCount %d, want 1", n)
	}
	_, err := s.Monitor("acct", job.GetUuid())
	requireNotFound(t, "deleted monitor", err)
	_, err = s.Events("acct", job.GetUuid(), 0)
	requireNotFound(t, "events of a deleted monitor", err)
	if evs := mustEvents(t, s, "acct", keep.GetUuid(), 0); len(evs) != 1 {
		t.Errorf("other monitor lost events: %d", len(evs))
	}
	if m := mustMonitor(t, s, "other", "job"); m.GetPing().GetEvents() != 1 {
		t.Errorf("other account's monitor changed: %v", m)
	}
	// The name is free: a new monitor with an empty history.
	rs := ingestOK(t, s, ingestNow(ping("acct", "job", "complete", t0+10)))
	if rs[0].GetMonitorUuid() == job.GetUuid() {
		t.Fatal("new monitor reuses the deleted uuid")
	}
	evs := mustEvents(t, s, "acct", rs[0].GetMonitorUuid(), 0)
	if len(evs) != 1 || evs[0].GetSeq() != 0 || evs[0].GetDuration() != 0 || evs[0].Duration != nil {
		t.Fatalf("history of the new monitor: %v", evs)
	}
	if n, _ := s.MonitorCount("acct"); n != 2 {
		t.Errorf("MonitorCount %d, want 2", n)
	}
}

func TestDeleteMonitorWithManyEventsFinishesInPruneEvents(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"))
	total := MaxPruneEvents + 300
	for i := 0; i < total; i += IngestBatchMaxEvents {
		var evs []*raftv1.Event
		for j := i; j < min(total, i+IngestBatchMaxEvents); j++ {
			evs = append(evs, ping("acct", "job", "skip", t0+int64(j)))
		}
		ingestOK(t, s, ingestNow(evs...))
	}
	id := mustMonitor(t, s, "acct", "job").GetUuid()
	mustOK(t, s, deleteMonitor("acct", id))
	evPrefix := []byte("ev:" + id + ":")
	if left := len(keysWithPrefix(t, s, evPrefix)); left != 300 {
		t.Fatalf("%d events left after delete, want 300", left)
	}
	if len(keysWithPrefix(t, s, prefixEventPurge)) != 1 {
		t.Fatal("no purge marker")
	}
	if n := pruned(t, s, 0, 200); n != 200 { // before 0: only the purge
		t.Fatalf("pruned %d, want 200", n)
	}
	if n := pruned(t, s, 0, 200); n != 100 {
		t.Fatalf("pruned %d, want 100", n)
	}
	for key := range dumpKV(t, s, true) {
		if strings.Contains(key, id) || bytes.HasPrefix([]byte(key), prefixEventPurge) {
			t.Errorf("key %q left", key)
		}
	}
	if n := pruned(t, s, 0, 200); n != 0 {
		t.Fatalf("pruned %d, want 0", n)
	}
}
