package state

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestIngestBatchBounds(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"))
	many := make([]*raftv1.Event, IngestBatchMaxEvents+1)
	for i := range many {
		many[i] = ping("acct", "job", "skip", t0)
	}
	big := ping("acct", "job", "skip", t0)
	big.Message = strings.Repeat("x", IngestBatchMaxBytes)
	for _, c := range []*raftv1.Command{ingestNow(many...), ingestNow(big)} {
		before := dumpKV(t, s, false)
		if res := apply(t, s, c)[0]; res.GetStatus() != raftv1.Status_STATUS_INVALID || len(res.GetEvents()) != 0 {
			t.Fatalf("oversized batch: %v %s", res.GetStatus(), res.GetMessage())
		}
		requireSameKV(t, before, dumpKV(t, s, false))
	}
	rs := ingestOK(t, s, ingestNow(many[:IngestBatchMaxEvents]...))
	if rs[IngestBatchMaxEvents-1].GetOutcome() != stored {
		t.Fatal("a full batch was not stored")
	}
}

func TestIngestUnknownAccount(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"))
	before := dumpKV(t, s, false)
	rs := ingestOK(t, s, ingestNow(ping("gone", "job", "run", t0), ping("", "job", "run", t0), ping("acct", "", "run", t0)))
	requireOutcomes(t, rs, noOutcome, noOutcome, noOutcome)
	for _, r := range rs {
		if r.GetQuota() != nil || r.GetMonitorUuid() != "" {
			t.Errorf("result %v", r)
		}
	}
	requireSameKV(t, before, dumpKV(t, s, false))
}

// ingestCommands is a sequence touching every ingest rule, to run after
// mixedCommands (accounts a1, a2, a4 exist).
func ingestCommands() []*raftv1.Command {
	lim := limits(proto.Int64(3), proto.Int64(6), 30)
	var cmds []*raftv1.Command
	cmds = append(cmds,
		setPlan("a2", lim),
		ingestAt(t0, 3,
			ping("a1", "backup", "run", t0, series("s1"), project("infra")),
			ping("a1", "backup", "run", t0+1000),
			ping("a1", "backup", "complete", t0+5000, series("s1"), eventID("e1")),
			ping("a1", "backup", "complete", t0+6000, eventID("e1")),
			&raftv1.Event{AccountId: "a1", Monitor: "deploy", EventType: "stream_event", State: "Running", ReceivedUnixMs: t0 + 10},
			&raftv1.Event{AccountId: "a1", Monitor: "deploy", EventType: "release", Message: "v1.2", ReceivedUnixMs: t0 + 11},
			ping("a2", "j1", "skip", t0), ping("a2", "j2", "run", t0), ping("a2", "j3", "fail", t0), ping("a2", "j4", "run", t0),
			ping("nobody", "x", "run", t0),
		),
		ingestAt(t0+1000, 3,
			ping("a1", "backup", "run", t0+7000), ping("a1", "backup", "fail", t0+9000, duration(1.5)),
			ping("a2", "j1", "run", t0+1000), ping("a2", "j1", "complete", t0+2000, project("p")),
			ping("a2", "j2", "run", t0+40_000), ping("a2", "j2", "run", t0+40_000),
		),
		pruneEvents(t0+5, 2),
	)
	return cmds
}

func TestIngestDeterminism(t *testing.T) {
	cmds := append(mixedCommands(), ingestCommands()...)
	var dumps [][]byte
	for _, how := range []string{"batch", "batch again", "one by one"} {
		s := openStore(t)
		if how == "one by one" {
			for _, c := range cmds {
				apply(t, s, c)
			}
		} else {
			apply(t, s, cmds...)
		}
		// The monitor of a deleted name comes back with a new uuid.
		m := mustMonitor(t, s, "a1", "deploy")
		apply(t, s, deleteMonitor("a1", m.GetUuid()), ingestNow(ping("a1", "deploy", "run", t0+20)))
		dumps = append(dumps, dump(t, s))
	}
	if !bytes.Equal(dumps[0], dumps[1]) || !bytes.Equal(dumps[0], dumps[2]) {
		t.Fatal("stores applying the same entries differ")
	}
}

func TestIngestSnapshotRestore(t *testing.T) {
	src := openStore(t)
	src.ApplyBatch(entries(5, append(mixedCommands(), ingestCommands()...)...))
	snap := dump(t, src)
	for _, prefix := range []string{"mon:", "mon-name:", "mon-count:", "ev:", "ev-due:", "evid:", "evid-time:", "runs:", "quota:"} {
		if len(keysWithPrefix(t, src, []byte(prefix))) == 0 {
			t.Errorf("the scenario writes no %s key", prefix)
		}
	}
	dst := openStore(t)
	mustOK(t, dst, newAccount("zzz"))
	if err := dst.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dump(t, dst), snap) {
		t.Fatal("restored state differs from the snapshot")
	}
	next := entries(src.AppliedIndex()+1,
		ingestAt(t0+2000, 3, ping("a1", "backup", "complete", t0+10_000), ping("a1", "fresh", "run", t0), ping("a2", "j9", "run", t0)),
		deleteMonitor("a1", mustMonitor(t, src, "a1", "backup").GetUuid()),
	)
	r1, r2 := src.ApplyBatch(next), dst.ApplyBatch(next)
	for i := range r1 {
		if !proto.Equal(r1[i], r2[i]) {
			t.Errorf("entry %d: results %v and %v", i, r1[i], r2[i])
		}
	}
	if !bytes.Equal(dump(t, dst), dump(t, src)) {
		t.Fatal("restored store diverged from the source")
	}
}

// TestIngestWorstCaseBatchFits applies the largest batch the bounds allow,
// every field at the length the HTTP layer allows, on top of expired event
// ids to prune and monitors to trim, in one fresh transaction with Badger's
// default options. An ordinary batch fits the Small options.
func TestIngestWorstCaseBatchFits(t *testing.T) {
	for _, tc := range []struct {
		name  string
		small bool
		worst bool
	}{{"worst, default options", false, true}, {"ordinary, small options", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(Options{Dir: t.TempDir(), Small: tc.small})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			mustOK(t, s, newAccount("acct"))
			unlimited := plan("free")
			unlimited.MonitorsCreatedPerMinute = proto.Int64(MaxMonitorsCreatedPerMinute)
			mustOK(t, s, setPlan("acct", unlimited))
			long := func(prefix string, i, n int) string {
				return fmt.Sprintf("%s%d-", prefix, i) + strings.Repeat("x", n)[:n-len(fmt.Sprint(prefix, i, "-"))]
			}
			size := func(n int) int {
				if tc.worst {
					return n
				}
				return n / 8
			}
			// Old monitors with events to trim, and expired ids stored again.
			for b := 0; b < 3; b++ {
				var evs []*raftv1.Event
				for i := range IngestBatchMaxEvents {
					evs = append(evs, ping("acct", long("old", i%128, 64), "run", t0, eventID(long("old-id", b*1000+i, size(128))), series(long("s", i, 64))))
				}
				ingestOK(t, s, ingestAt(t0, 0, evs...))
			}
			now := t0 + eventIDTTLMillis + day
			var evs []*raftv1.Event
			for i := range IngestBatchMaxEvents {
				name := long("new", i, 64)
				if i%2 == 0 {
					name = long("old", i/2, 64)
				}
				ev := ping("acct", name, "complete", now, eventID(long("id", i, size(128))), series(long("s", i, 64)), project(long("p", i, size(100))), timestamp(now/1000))
				ev.Host, ev.ExitCode = long("h", i, size(255)), proto.Int64(1)
				evs = append(evs, ev)
			}
			per := IngestBatchMaxBytes / IngestBatchMaxEvents
			for _, ev := range evs {
				ev.Message = strings.Repeat("m", max(0, size(per)-proto.Size(ev)-16))
			}
			c := withRID(ingestAt(now, 1, evs...), strings.Repeat("r", 36), now)
			if n := proto.Size(c.GetIngestBatch()); tc.worst && (n > IngestBatchMaxBytes || n < IngestBatchMaxBytes*9/10) {
				t.Fatalf("batch of %d bytes is not the worst case", n)
			}
			es := entries(s.AppliedIndex()+1, c)
			if fit := fitsOneTxn(t, s, es); fit != 1 {
				t.Fatal("the batch does not fit one transaction")
			}
			rs := s.ApplyBatch(es)[0].GetEvents()
			if rs[0].GetOutcome() != stored || rs[IngestBatchMaxEvents-1].GetOutcome() != stored {
				t.Fatalf("outcomes %v", outcomes(rs))
			}
		})
	}
}
