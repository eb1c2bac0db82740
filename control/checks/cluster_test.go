package checks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	"lookout/control/checks"
	"lookout/control/state"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/probe"
	"lookout/internal/probe/httpprobe"
	"lookout/internal/schedule"
)

// speed is how much faster than real time the schedulers' clock runs in
// the 3-node test: the shortest schedule is 30 s (schedule.MinInterval),
// 3 s of real time at this speed.
const speed = 10

// fastClock is a clock that runs speed times faster than real time, shared
// by the schedulers of every node and the test's server.
type fastClock struct{ start time.Time }

func (c fastClock) Now() time.Time { return c.start.Add(time.Since(c.start) * speed) }

func (c fastClock) After(d time.Duration) <-chan time.Time { return time.After(d / speed) }

// sleepUntil sleeps until the clock reads at.
func (c fastClock) sleepUntil(at time.Time) { time.Sleep(at.Sub(c.Now()) / speed) }

// tagged is the real HTTP probe, with the node that runs it and the
// execution's slot added to the request's query, so the server can tell
// who probed which slot.
type tagged struct {
	node int
	p    probe.Prober
}

func (t tagged) Probe(ctx context.Context, target probe.Target) probe.Result {
	slot, _ := checks.SlotOf(ctx)
	target.URL += fmt.Sprintf("?slot=%d&node=%d", slot.UnixMilli(), t.node)
	return t.p.Probe(ctx, target)
}

// request is one request the checked site received.
type request struct {
	node int
	atMs int64 // on the fast clock
}

// slotKey is a (check, slot).
type slotKey struct {
	check string
	slot  int64
}

// TestLeaderKilledWhileChecksAreDue runs 30 http_checks every 30 s (on a
// clock 10 times faster than real time), one due each second, against a
// local server, on 3 real nodes. The leader is killed while one check's
// request is under way: the new leader runs the latest slot of every check
// (including those due while there was no leader, and the one the old
// leader left running), every slot's execution ends final, and no slot was
// probed to a verdict twice: a slot probed by two nodes is one the killed
// leader had not decided, and its verdict is the new leader's.
func TestLeaderKilledWhileChecksAreDue(t *testing.T) {
	clk := fastClock{start: time.Now()}
	sc, _ := schedule.Parse("30s")
	var ids []string // ids[k] has offset k s
	for k := range 30 {
		for i := 0; ; i++ {
			id := fmt.Sprintf("c0000000-0000-4000-8000-%012d", i)
			if sc.Offset(id) == time.Duration(k)*time.Second {
				ids = append(ids, id)
				break
			}
		}
	}
	slow := ids[10] // its site answers after 1 s (10 s on the clock)

	var (
		mu   sync.Mutex
		reqs = map[slotKey][]request{}
	)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		check := strings.TrimPrefix(r.URL.Path, "/c/")
		slot, err1 := strconv.ParseInt(r.URL.Query().Get("slot"), 10, 64)
		node, err2 := strconv.Atoi(r.URL.Query().Get("node"))
		if err1 != nil || err2 != nil {
			t.Errorf("request %s without slot or node", r.URL)
		}
		mu.Lock()
		reqs[slotKey{check, slot}] = append(reqs[slotKey{check, slot}], request{node, clk.Now().UnixMilli()})
		mu.Unlock()
		if check == slow {
			select {
			case <-time.After(time.Second):
			case <-r.Context().Done():
			}
		}
		w.Write([]byte("ok"))
	}))
	defer site.Close()

	var (
		smu    sync.Mutex
		scheds = map[int]*checks.Scheduler{} // the newest of each node
	)
	c := clustertest.NewCluster(t, 3, clustertest.Options{Tune: func(i int, o *cluster.Options) {
		o.LeaderTasks = []func(context.Context, *cluster.Node){func(ctx context.Context, n *cluster.Node) {
			st := clustertest.StateOf(n)
			s := checks.New(checks.Options{
				Cluster: n, State: st, Feed: st.NewFeed(), Now: clk.Now, After: clk.After,
				// Late starts on a loaded machine are ×10 on this clock.
				MaxLate: 2 * time.Minute,
				Probers: map[string]probe.Prober{state.KindHTTPCheck: tagged{i, httpprobe.New(probe.Options{Version: "test"})}},
			})
			smu.Lock()
			scheds[i] = s
			smu.Unlock()
			s.Run(ctx)
		}}
	}})
	apply := func(cmd *raftv1.Command) {
		t.Helper()
		res, err := c.Leader(30*time.Second).Apply(clustertest.Context(t, 30*time.Second), cmd)
		if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("apply %T: %v %v", cmd.GetOp(), res, err)
		}
	}
	acct := uuid.NewString()
	_, ih, _ := apikey.New(apikey.Ingest)
	_, mh, _ := apikey.New(apikey.Management)
	apply(&raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: acct, Email: "ops@example.com", Plan: &raftv1.Plan{Name: "default"},
		IngestKey:     &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "default", Hash: ih},
		ManagementKey: &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "personal", Hash: mh},
	}}})
	put := &raftv1.PutMonitors{AccountId: acct}
	for _, id := range ids {
		put.Creates = append(put.Creates, &raftv1.MonitorSpec{Uuid: id, Kind: state.KindHTTPCheck, Name: id, Enabled: true, Schedule: "30s",
			Config: &raftv1.CheckConfig{Url: site.URL + "/c/" + id, Method: "GET", Timeout: 10, ExpectedStatus: new(int64(200))}})
	}
	apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: put}})

	executions := func(st *state.Store, id string) []*raftv1.Execution {
		t.Helper()
		execs, err := st.Executions(acct, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		return execs
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	old := c.Leader(30 * time.Second)
	waitFor("every check's first run", func() bool {
		for _, id := range ids {
			if len(executions(old.State(), id)) == 0 {
				return false
			}
		}
		return true
	})

	// Kill the leader 3 s (on the clock) into a slot of the slow check: its
	// request is under way; the checks due in the next seconds find no
	// leader.
	slowSlot := sc.NextFor(slow, clk.Now().Add(10*time.Second))
	clk.sleepUntil(slowSlot.Add(3 * time.Second))
	killed := clk.Now()
	c.Kill(old.Index)
	killedEnd := clk.Now()
	leader, err := c.WaitLeader(30*time.Second, c.Running()...)
	if err != nil {
		t.Fatal(err)
	}
	waitFor("the new leader's scheduler", func() bool {
		smu.Lock()
		defer smu.Unlock()
		s := scheds[leader.Index]
		return s != nil && s.Stats().Ready
	})
	ready := clk.Now()
	t.Logf("killed node %d at %s; node %d's scheduler ready %s later (on the clock)", old.Index, killed.Format("15:04:05.000"), leader.Index, ready.Sub(killed))

	// Two more periods; then every execution of a slot until cutoff is final.
	cutoff := ready.Add(60 * time.Second)
	clk.sleepUntil(cutoff.Add(10 * time.Second))
	st := leader.State()
	waitFor("every execution until the cutoff to be final", func() bool {
		for _, id := range ids {
			for _, e := range executions(st, id) {
				if e.GetSlotUnixMs() <= cutoff.UnixMilli() && !state.FinalStatus(e.GetStatus()) {
					return false
				}
			}
		}
		return true
	})
	var other *state.Store
	for _, n := range c.Running() {
		if n != leader {
			other = n.State()
		}
	}
	// until are the executions of slots until the cutoff (the schedulers
	// still run).
	until := func(execs []*raftv1.Execution) []*raftv1.Execution {
		var out []*raftv1.Execution
		for _, e := range execs {
			if e.GetSlotUnixMs() <= cutoff.UnixMilli() {
				out = append(out, e)
			}
		}
		return out
	}
	waitFor("the other survivor to hold the same executions", func() bool {
		for _, id := range ids {
			a, b := until(executions(other, id)), until(executions(st, id))
			if len(a) != len(b) {
				return false
			}
			for i := range a {
				if !proto.Equal(a[i], b[i]) {
					return false
				}
			}
		}
		return true
	})

	mu.Lock()
	defer mu.Unlock()
	dueWithoutLeader, rerun, closed := 0, 0, 0
	for _, id := range ids {
		execs := until(executions(st, id))
		bySlot := map[int64]*raftv1.Execution{}
		for _, e := range execs {
			bySlot[e.GetSlotUnixMs()] = e
		}
		// The latest slot before the new leader was ready ran, on the
		// new leader if the old one had not decided it.
		latest := sc.NextFor(id, ready).Add(-30 * time.Second)
		if e := bySlot[latest.UnixMilli()]; e.GetStatus() != state.ExecSuccess {
			t.Errorf("%s: the slot %s, latest when the new leader was ready, has %v", id, latest.Format("15:04:05"), e)
		} else if latest.After(killed) {
			dueWithoutLeader++
		}
		for _, e := range execs {
			slot := e.GetSlotUnixMs()
			rs := reqs[slotKey{id, slot}]
			if state.Interrupted(e) {
				closed++
				if slot > killedEnd.UnixMilli() {
					t.Errorf("%s: slot %d closed as interrupted, but the leader was killed before it", id, slot)
				}
				for _, r := range rs {
					if r.node != old.Index {
						t.Errorf("%s: slot %d closed as interrupted after node %d probed it", id, slot, r.node)
					}
				}
				continue
			}
			if e.GetStatus() != state.ExecSuccess || len(rs) == 0 {
				t.Errorf("%s: slot %d: %v after %d requests", id, slot, e, len(rs))
				continue
			}
			// The verdict is the last request's; any earlier one was the
			// killed leader's, which it did not decide.
			last := rs[len(rs)-1]
			if e.GetStartedUnixMs() > last.atMs {
				t.Errorf("%s: slot %d: the verdict started after the last request", id, slot)
			}
			if len(rs) > 1 {
				rerun++
			}
			for _, r := range rs[:len(rs)-1] {
				if r.node != old.Index || r.node == last.node || e.GetStartedUnixMs() <= r.atMs {
					t.Errorf("%s: slot %d probed to a verdict twice: requests %v, verdict started at %d", id, slot, rs, e.GetStartedUnixMs())
				}
			}
		}
	}
	// Every request was for a slot the state holds.
	for k, rs := range reqs {
		if k.slot > cutoff.UnixMilli() {
			continue
		}
		if _, err := st.Execution(k.check, state.RegionControl, k.slot); err != nil {
			t.Errorf("%s: slot %d was probed %v but has no execution: %v", k.check, k.slot, rs, err)
		}
	}
	if dueWithoutLeader == 0 {
		t.Fatalf("no check's latest slot fell due between the kill and the new leader (%s)", ready.Sub(killed))
	}
	t.Logf("%d slots fell due with no leader and ran on the new one; %d the killed leader left undecided were rerun, %d closed as interrupted", dueWithoutLeader, rerun, closed)
}
