package state

import (
	"errors"
	"fmt"
	"github.com/dgraph-io/badger/v4"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// none marks an event stored without a duration.
const none = -1.0

func TestRunPairing(t *testing.T) {
	p := func(status string, ms int64, opts ...func(*raftv1.Event)) *raftv1.Event {
		return ping("acct", "job", status, t0+ms, opts...)
	}
	for _, tc := range []struct {
		name     string
		evs      []*raftv1.Event
		want     []float64 // duration stored with each event
		openRuns int       // left at the end
	}{
		{"run, complete: computed", []*raftv1.Event{p("run", 0), p("complete", 1500)}, []float64{none, 1.5}, 0},
		{"run, fail: computed", []*raftv1.Event{p("run", 0), p("fail", 2000)}, []float64{none, 2}, 0},
		{"sent duration wins", []*raftv1.Event{p("run", 0), p("complete", 1500, duration(9.25))}, []float64{none, 9.25}, 0},
		{"sent duration on run is kept", []*raftv1.Event{p("run", 0, duration(3))}, []float64{3}, 1},
		{"complete without run", []*raftv1.Event{p("complete", 0)}, []float64{none}, 0},
		{"second complete finds nothing", []*raftv1.Event{p("run", 0), p("complete", 1000), p("complete", 2000)}, []float64{none, 1, none}, 0},
		{"series pair by series",
			[]*raftv1.Event{p("run", 0, series("a")), p("run", 10_000, series("b")), p("complete", 30_000, series("a")), p("complete", 40_000, series("b"))},
			[]float64{none, none, 30, 30}, 0},
		{"without series: newest open run, overlapping",
			[]*raftv1.Event{p("run", 0), p("run", 10_000), p("complete", 30_000), p("complete", 40_000)},
			[]float64{none, none, 20, 40}, 0},
		{"without series closes the newest of any series",
			[]*raftv1.Event{p("run", 0), p("run", 10_000, series("x")), p("fail", 30_000)},
			[]float64{none, none, 20}, 1},
		{"series with no open run of it",
			[]*raftv1.Event{p("run", 0), p("complete", 5000, series("other"))},
			[]float64{none, none}, 1},
		{"same series replaces the older run",
			[]*raftv1.Event{p("run", 0, series("a")), p("run", 10_000, series("a")), p("complete", 30_000, series("a")), p("complete", 31_000, series("a"))},
			[]float64{none, none, 20, none}, 0},
		{"newest by start time, not arrival (timestamps)",
			[]*raftv1.Event{p("run", 0, timestamp(t0/1000+100)), p("run", 0, timestamp(t0/1000+50)), p("complete", 0, timestamp(t0/1000+130))},
			[]float64{none, none, 30}, 1},
		{"skip neither opens nor closes",
			[]*raftv1.Event{p("run", 0), p("skip", 1000), p("complete", 4000), p("skip", 5000), p("complete", 6000)},
			[]float64{none, none, 4, none, none}, 0},
		{"72 h exactly still pairs", []*raftv1.Event{p("run", 0), p("complete", 72*hour)}, []float64{none, 72 * 3600}, 0},
		{"past 72 h: not paired, run dropped",
			[]*raftv1.Event{p("run", 0, series("a")), p("complete", 72*hour+1, series("a")), p("complete", 72*hour+2, series("a"))},
			[]float64{none, none, none}, 0},
		{"past 72 h without series: stale newest dropped, nothing paired",
			[]*raftv1.Event{p("run", 0), p("run", hour), p("complete", 73*hour+1)},
			[]float64{none, none, none}, 0},
		{"a fresh run survives an old one's cut-off",
			[]*raftv1.Event{p("run", 0), p("run", 72*hour), p("complete", 72*hour+1)},
			[]float64{none, none, 0.001}, 0},
		{"complete before its run: duration 0",
			[]*raftv1.Event{p("run", 0, timestamp(t0/1000+100)), p("complete", 0, timestamp(t0/1000+50))},
			[]float64{none, 0}, 0},
		{"stream and custom events leave runs alone",
			[]*raftv1.Event{p("run", 0), {AccountId: "acct", Monitor: "job", EventType: "stream_event", State: "complete", ReceivedUnixMs: t0 + 1},
				{AccountId: "acct", Monitor: "job", EventType: "deploy", Status: "complete", ReceivedUnixMs: t0 + 2}, p("complete", 3000)},
			[]float64{none, none, none, 3}, 0},
	} {
		for _, oneByOne := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/one by one %v", tc.name, oneByOne), func(t *testing.T) {
				s := openStore(t)
				mustOK(t, s, newAccount("acct"))
				if oneByOne {
					for _, ev := range tc.evs {
						ingestOK(t, s, ingestNow(ev))
					}
				} else {
					ingestOK(t, s, ingestNow(tc.evs...))
				}
				m := mustMonitor(t, s, "acct", "job")
				evs := mustEvents(t, s, "acct", m.GetUuid(), 0)
				for i, want := range tc.want {
					ev := evs[len(evs)-1-i]
					got := none
					if ev.Duration != nil {
						got = ev.GetDuration()
					}
					if got != want {
						t.Errorf("event %d (%s): duration %v, want %v", i, ev.GetEvent().GetStatus(), got, want)
					}
				}
				runs := openRunsOf(t, s, m.GetUuid())
				if len(runs) != tc.openRuns {
					t.Errorf("%d open runs, want %d: %v", len(runs), tc.openRuns, runs)
				}
				if tc.openRuns == 0 && len(keysWithPrefix(t, s, prefixRuns)) != 0 {
					t.Error("an empty runs value is stored")
				}
			})
		}
	}
}

func openRunsOf(t *testing.T, s *Store, id string) []*statev1.OpenRun {
	t.Helper()
	txn := s.db().NewTransaction(false)
	defer txn.Discard()
	runs, err := getRuns(txn, id)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func TestOpenRunsAreBounded(t *testing.T) {
	var runs []*statev1.OpenRun
	for i := range maxOpenRuns + 10 {
		runs = openRun(runs, "", t0+int64(i), uint64(i))
	}
	if len(runs) != maxOpenRuns || runs[0].GetEventSeq() != 10 || runs[len(runs)-1].GetEventSeq() != maxOpenRuns+9 {
		t.Fatalf("%d runs from seq %d to %d", len(runs), runs[0].GetEventSeq(), runs[len(runs)-1].GetEventSeq())
	}
	// Same start: ordered by seq.
	runs = openRun(nil, "", t0, 5)
	runs = openRun(runs, "", t0, 3)
	if runs[0].GetEventSeq() != 3 || runs[1].GetEventSeq() != 5 {
		t.Fatalf("order %v", runs)
	}
}

// getRuns reads a monitor's open runs.
func getRuns(txn *badger.Txn, monitorID string) ([]*statev1.OpenRun, error) {
	v, err := getRaw(txn, runsKey(monitorID))
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeRuns(monitorID, v)
}
