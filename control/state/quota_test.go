package state

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// t0 is 2023-11-14T22:13:20Z.
var (
	dec2023 = time.Date(2023, 12, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	jan2024 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
)

func TestQuotaStatus(t *testing.T) {
	lim := limits(nil, proto.Int64(10), 60)
	for _, tc := range []struct {
		name  string
		plan  *raftv1.Plan
		q     *statev1.Quota
		at    int64
		state string
		used  int64
		reset int64
	}{
		{"no limit", plan("free"), &statev1.Quota{Period: 202311, Used: 1e6, ExceededUnixMs: t0}, t0, QuotaOK, 1e6, dec2023},
		{"empty", lim, &statev1.Quota{}, t0, QuotaOK, 0, dec2023},
		{"under 80%", lim, &statev1.Quota{Period: 202311, Used: 7}, t0, QuotaOK, 7, dec2023},
		{"80%", lim, &statev1.Quota{Period: 202311, Used: 8}, t0, QuotaWarning, 8, dec2023},
		{"at the limit", lim, &statev1.Quota{Period: 202311, Used: 10}, t0, QuotaWarning, 10, dec2023},
		{"past, in grace", lim, &statev1.Quota{Period: 202311, Used: 11, ExceededUnixMs: t0}, t0 + 60*second - 1, QuotaExceeded, 11, dec2023},
		{"past, grace over", lim, &statev1.Quota{Period: 202311, Used: 11, ExceededUnixMs: t0}, t0 + 60*second, QuotaSuspended, 11, dec2023},
		{"past, grace not started", lim, &statev1.Quota{Period: 202311, Used: 11}, t0 + day, QuotaExceeded, 11, dec2023},
		{"next month resets", lim, &statev1.Quota{Period: 202311, Used: 11, ExceededUnixMs: t0}, dec2023, QuotaOK, 0, jan2024},
		{"december resets in january", lim, &statev1.Quota{Period: 202312, Used: 3}, dec2023 + 1, QuotaOK, 3, jan2024},
		{"an earlier time counts in the stored period", lim, &statev1.Quota{Period: 202312, Used: 9}, dec2023 - 1, QuotaWarning, 9, jan2024},
	} {
		st := quotaStatus(tc.plan, tc.q, tc.at)
		if st.GetState() != tc.state || st.GetUsed() != tc.used || st.GetResetsAtUnixMs() != tc.reset ||
			(st.Limit == nil) != (tc.plan.MonthlyEventLimit == nil) || st.GetLimit() != tc.plan.GetMonthlyEventLimit() {
			t.Errorf("%s: %v, want %s used %d reset %d", tc.name, st, tc.state, tc.used, tc.reset)
		}
	}
}

// quotaRun drives one account through ingest batches and checks each
// event's outcome and quota state.
type quotaStep struct {
	name  string
	setup []*raftv1.Command // applied before the event
	mon   string            // monitor name of the event (default "job")
	at    int64             // receipt time
	want  raftv1.EventOutcome
	state string
	used  int64
}

func runQuotaSteps(t *testing.T, s *Store, steps []quotaStep) {
	t.Helper()
	for _, st := range steps {
		mustOK(t, s, st.setup...)
		mon := st.mon
		if mon == "" {
			mon = "job"
		}
		before := dumpKV(t, s, false)
		r := ingestOK(t, s, ingestAt(st.at, 0, ping("acct", mon, "skip", st.at)))[0]
		if r.GetOutcome() != st.want || r.GetQuota().GetState() != st.state || r.GetQuota().GetUsed() != st.used {
			t.Fatalf("%s: %v, want %v %s used %d", st.name, r, st.want, st.state, st.used)
		}
		if st.want != stored {
			requireSameKV(t, before, dumpKV(t, s, false))
		}
		if qs, err := s.QuotaStatus("acct", st.at); err != nil || !proto.Equal(qs, r.GetQuota()) {
			t.Fatalf("%s: QuotaStatus %v, %v; event said %v", st.name, qs, err, r.GetQuota())
		}
	}
}

func TestQuotaTransitions(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"), setPlan("acct", limits(nil, proto.Int64(10), 60)))
	var steps []quotaStep
	for i := int64(1); i <= 7; i++ {
		steps = append(steps, quotaStep{name: "ok", at: t0 + i, want: stored, state: QuotaOK, used: i})
	}
	steps = append(steps,
		quotaStep{name: "80%", at: t0 + 8, want: stored, state: QuotaWarning, used: 8},
		quotaStep{name: "at the limit", at: t0 + 10, want: stored, state: QuotaWarning, used: 9},
		quotaStep{name: "at the limit", at: t0 + 10, want: stored, state: QuotaWarning, used: 10},
		quotaStep{name: "past: grace starts", at: t0 + 100, want: stored, state: QuotaExceeded, used: 11},
		quotaStep{name: "grace", at: t0 + 100 + 60*second - 1, want: stored, state: QuotaExceeded, used: 12},
		quotaStep{name: "grace over", at: t0 + 100 + 60*second, want: suspended, state: QuotaSuspended, used: 12},
		quotaStep{name: "suspended creates no monitor", mon: "new", at: t0 + hour, want: suspended, state: QuotaSuspended, used: 12},
		quotaStep{name: "next month", at: dec2023, want: stored, state: QuotaOK, used: 1},
	)
	runQuotaSteps(t, s, steps)
	if _, err := s.MonitorByName("acct", KindPing, "new"); err == nil {
		t.Error("a suspended account created a monitor")
	}
	if mons, used, err := s.Usage("acct", dec2023); mons != 1 || used != 1 || err != nil {
		t.Errorf("Usage = %d, %d, %v", mons, used, err)
	}
	_, _, err := s.Usage("nobody", t0)
	requireNotFound(t, "Usage of no account", err)
	_, err = s.QuotaStatus("nobody", t0)
	requireNotFound(t, "QuotaStatus of no account", err)
}

// suspend brings acct (plan: 2 monitors, 3 events, grace 10 s) to
// suspended at t0+20s with 4 events on "job".
func suspend(t *testing.T, s *Store) {
	t.Helper()
	mustOK(t, s, newAccount("acct"), setPlan("acct", limits(proto.Int64(2), proto.Int64(3), 10)))
	runQuotaSteps(t, s, []quotaStep{
		{name: "1", at: t0, want: stored, state: QuotaOK, used: 1},
		{name: "2", at: t0, want: stored, state: QuotaOK, used: 2},
		{name: "3", at: t0, want: stored, state: QuotaWarning, used: 3},
		{name: "4", at: t0 + 10*second, want: stored, state: QuotaExceeded, used: 4},
		{name: "5", at: t0 + 20*second, want: suspended, state: QuotaSuspended, used: 4},
	})
}

func TestQuotaResumes(t *testing.T) {
	at := t0 + 30*second
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, s *Store) []*raftv1.Command
		steps []quotaStep
	}{
		{"plan upgrade resumes at once", func(*testing.T, *Store) []*raftv1.Command {
			return []*raftv1.Command{setPlan("acct", limits(proto.Int64(2), proto.Int64(100), 10))}
		}, []quotaStep{{name: "after", at: at, want: stored, state: QuotaOK, used: 5}}},
		{"plan without a limit resumes", func(*testing.T, *Store) []*raftv1.Command {
			return []*raftv1.Command{setPlan("acct", limits(nil, nil, 0))}
		}, []quotaStep{{name: "after", at: at, want: stored, state: QuotaOK, used: 5}}},
		{"a limit still too low does not", func(*testing.T, *Store) []*raftv1.Command {
			return []*raftv1.Command{setPlan("acct", limits(proto.Int64(2), proto.Int64(3), 10))}
		}, []quotaStep{{name: "after", at: at, want: suspended, state: QuotaSuspended, used: 4}}},
		{"dropping under the monitor limit resumes; grace starts again", func(t *testing.T, s *Store) []*raftv1.Command {
			mustOK(t, s, setPlan("acct", limits(proto.Int64(5), proto.Int64(3), 10)))
			ingestOK(t, s, ingestNow(ping("acct", "other", "skip", t0))) // 2 monitors, still in grace at t0
			mustOK(t, s, setPlan("acct", limits(proto.Int64(2), proto.Int64(3), 10)))
			return []*raftv1.Command{withRID(deleteMonitor("acct", mustMonitor(t, s, "acct", "other").GetUuid()), "", t0+25*second)}
		}, []quotaStep{
			{name: "resumed", at: at, want: stored, state: QuotaExceeded, used: 6},
			{name: "grace", at: at + 10*second - 1, want: stored, state: QuotaExceeded, used: 7},
			{name: "suspended again", at: at + 10*second, want: suspended, state: QuotaSuspended, used: 7},
		}},
		{"deleting while under the monitor limit does not", func(t *testing.T, s *Store) []*raftv1.Command {
			mustOK(t, s, setPlan("acct", limits(proto.Int64(5), proto.Int64(3), 10)))
			ingestOK(t, s, ingestNow(ping("acct", "other", "skip", t0)))
			return []*raftv1.Command{withRID(deleteMonitor("acct", mustMonitor(t, s, "acct", "other").GetUuid()), "", t0+25*second)}
		}, []quotaStep{{name: "after", at: at, want: suspended, state: QuotaSuspended, used: 5}}},
		{"next month resumes", func(*testing.T, *Store) []*raftv1.Command { return nil },
			[]quotaStep{{name: "after", at: dec2023, want: stored, state: QuotaOK, used: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			suspend(t, s)
			tc.steps[0].setup = tc.setup(t, s)
			runQuotaSteps(t, s, tc.steps)
		})
	}
}

func TestLoweredEventLimitStartsGrace(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"))
	runQuotaSteps(t, s, []quotaStep{
		{name: "1", at: t0, want: stored, state: QuotaOK, used: 1},
		{name: "2", at: t0, want: stored, state: QuotaOK, used: 2},
		{name: "lowered", setup: []*raftv1.Command{withRID(setPlan("acct", limits(nil, proto.Int64(1), 5)), "", t0+second)},
			at: t0 + 6*second - 1, want: stored, state: QuotaExceeded, used: 3},
		{name: "grace from the plan change", at: t0 + 6*second, want: suspended, state: QuotaSuspended, used: 3},
	})
}
