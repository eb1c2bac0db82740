package checks

import (
	"fmt"
	"net/http"
	"testing"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/probe"
	"lookout/internal/probe/httpprobe"
	"lookout/internal/probe/probetest"
)

// putCheck creates the account's http_check id of target url, run every
// hour (and once at once), with a timeout of timeout seconds.
func (f *fixture) putCheck(account, id, url string, timeout int64) {
	f.t.Helper()
	spec := &raftv1.MonitorSpec{Uuid: id, Kind: state.KindHTTPCheck, Name: id, Enabled: true, Schedule: "1h",
		Config: &raftv1.CheckConfig{Url: url, Method: "GET", Timeout: timeout, ExpectedStatus: new(int64(200))}}
	f.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: account, Creates: []*raftv1.MonitorSpec{spec}}}})
}

// realProbers are the real probes (the scheduler's default), over
// loopback.
func realProbers() map[string]probe.Prober {
	p := httpprobe.New(probe.Options{Version: "test"})
	return map[string]probe.Prober{state.KindHTTPCheck: p}
}

// TestHungAccountDoesNotDelayAnother: account a's 12 checks target a
// listener that accepts and never answers (60 s timeouts). They hold at
// most a's share of the 10 workers (8 by default), the rest wait for a's
// share, and account b's new check runs to its verdict while every one of
// a's is still hanging.
func TestHungAccountDoesNotDelayAnother(t *testing.T) {
	f := newFixture(t)
	f.account("b")
	silent := probetest.NewSilent(t)
	good := probetest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	f.start(Options{Workers: 10, Probers: realProbers()})
	for i := range 12 {
		f.putCheck("a", fmt.Sprintf("a0000000-0000-4000-8000-%012d", i), silent.URL, 60)
	}
	f.waitFor("a's checks to hang", 0, func() bool { held, _ := silent.Held(); return held >= 8 })

	const b = "b0000000-0000-4000-8000-000000000001"
	f.putCheck("b", b, good.URL, 10)
	f.waitFor("b's verdict", 0, func() bool { return len(f.verdictsOf("b", b)) == 1 })
	if v := f.verdictsOf("b", b)[0]; v.GetStatus() != state.ExecSuccess {
		t.Fatalf("b's execution %v", v)
	}
	held, accepted := silent.Held()
	if held != 8 || accepted != 8 {
		t.Errorf("a's checks hold %d connections (%d made), want a's share: 8", held, accepted)
	}
	for i := range 12 {
		if vs := f.verdictsOf("a", fmt.Sprintf("a0000000-0000-4000-8000-%012d", i)); len(vs) != 0 {
			t.Fatalf("a's hung check has a verdict already: %v", vs)
		}
	}
	if st := f.sched.Stats(); st.WaitingForShare != 4 {
		t.Errorf("%d executions wait for their account's share, want 4", st.WaitingForShare)
	}
}

// TestRetryWaitHoldsNoWorker: an execution waiting for its retry holds no
// worker: with one worker, account b's check runs while account a's waits
// to try again.
func TestRetryWaitHoldsNoWorker(t *testing.T) {
	f := newFixture(t)
	f.account("b")
	const a, b = "a0000000-0000-4000-8000-0000000000f1", "b0000000-0000-4000-8000-0000000000f1"
	f.prober.result = func(u string, n int) probe.Result {
		if u == url(a) {
			return probe.Result{Err: &probe.Error{Kind: probe.KindStatus, Message: "status 503", Transient: true}, HTTP: &probe.HTTP{StatusCode: 503}}
		}
		return probe.Result{HTTP: &probe.HTTP{StatusCode: 200}}
	}
	f.start(Options{Workers: 1})
	f.putCheck("a", a, url(a), 10)
	f.waitFor("a's first attempt to fail", 0, func() bool {
		ex, err := f.store.Execution(a, state.RegionControl, base.UnixMilli())
		return err == nil && ex.GetStatus() == state.ExecRetrying
	})
	f.putCheck("b", b, url(b), 10) // the fake clock stands still: a's retry never comes
	f.waitFor("b's verdict", 0, func() bool { return len(f.verdictsOf("b", b)) == 1 })
	if n := len(f.prober.attempts(url(a))); n != 1 {
		t.Fatalf("a's check made %d attempts, want 1 (its retry waits)", n)
	}
}
