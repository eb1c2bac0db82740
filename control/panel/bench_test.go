package panel_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"lookout/control/admin"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// BenchmarkPages renders the list of an account with 1,000 ping
// monitors, and a monitor's page with its 100 newest events, over HTTP on
// loopback (go test -run '^$' -bench . ./control/panel/).
func BenchmarkPages(b *testing.B) {
	n := newNode(b)
	rate, burst, limit, creations := 100000.0, int64(100000), int64(2000), int64(2000)
	a := n.signUp("bench@example.com", &admin.PlanRequest{IngestRatePerSecond: &rate, IngestBurst: &burst, MonitorLimit: &limit, MonitorsCreatedPerMinute: &creations})
	for i := range 1000 {
		n.ping(a, fmt.Sprintf(`{"event_type":"ping","monitor":"job-%04d","status":"complete","duration":1.5}`, i))
	}
	for range 120 {
		n.ping(a, `{"event_type":"ping","monitor":"job-0000","status":"complete","duration":2}`)
	}
	id := n.monitorUUID(a, "job-0000")
	br := n.browser()
	br.signIn(a)
	for _, tc := range []struct{ name, path string }{{"list-1000", "/"}, {"monitor-100-events", "/monitors/" + id}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if p := br.get(tc.path); p.Status != http.StatusOK {
					b.Fatal(p.Status)
				}
			}
		})
	}
}

// BenchmarkMonitorList10000 renders pages of the list of an account with
// 10,000 monitors (8,500 ping monitors, 3,000 of them pinged: up, failed
// or running; 1,000 http_checks and 500 ssl_checks, 300 with an
// execution), over HTTP on loopback, signed in: the first page, a far
// page, a search, and filters by state, tag and project. It prints ms/op;
// docs/performance.md has the figures (make bench-panel).
func BenchmarkMonitorList10000(b *testing.B) {
	n := newNode(b)
	limit, creations := int64(20000), int64(20000)
	a := n.signUp("bench@example.com", &admin.PlanRequest{MonitorLimit: &limit, MonitorsCreatedPerMinute: &creations})
	fillAccount(b, n, a)
	br := n.browser()
	br.signIn(a)
	for _, tc := range []struct{ name, path string }{
		{"first-page", "/"},
		{"page-80", "/?page=80"},
		{"search", "/?q=job-12"},
		{"state-failed", "/?state=failed"},
		{"tag", "/?tag=nightly"},
		{"project", "/?project=team-3"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if p := br.get(tc.path); p.Status != http.StatusOK {
					b.Fatal(p.Status)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
		})
	}
}

// fillAccount makes a's 10,000 monitors of BenchmarkMonitorList10000
// with raft commands, as the APIs would.
func fillAccount(b *testing.B, n *node, a account) {
	ctx := context.Background()
	apply := func(cmd *raftv1.Command) {
		if res, err := n.Cluster.Apply(ctx, cmd); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			b.Fatalf("apply: %v %v", res, err)
		}
	}
	var specs []*raftv1.MonitorSpec
	for i := range 8500 {
		project := fmt.Sprintf("team-%d", i%20)
		tags := []string{"batch"}
		if i%10 == 0 {
			tags = append(tags, "nightly")
		}
		specs = append(specs, &raftv1.MonitorSpec{Uuid: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Kind: state.KindPing, Name: fmt.Sprintf("job-%05d", i),
			DisplayName: fmt.Sprintf("Job %d of team %d", i, i%20), Enabled: true, Tags: tags, TimeoutSeconds: 3600, Project: &project})
	}
	for i := range 1500 {
		kind, cfg := state.KindHTTPCheck, &raftv1.CheckConfig{Url: fmt.Sprintf("https://site-%d.example.com/health", i), Method: "GET", Timeout: 10, ExpectedStatus: ptr(int64(200))}
		if i >= 1000 {
			kind, cfg = state.KindSSLCheck, &raftv1.CheckConfig{Domain: fmt.Sprintf("site-%d.example.com", i), WarningDays: 30, AlertDays: 7}
		}
		specs = append(specs, &raftv1.MonitorSpec{Uuid: fmt.Sprintf("00000000-0000-4000-9000-%012d", i), Kind: kind, Name: fmt.Sprintf("site-%05d", i),
			Enabled: true, Tags: []string{"web"}, Schedule: "5m", Config: cfg})
	}
	for len(specs) > 0 {
		chunk := specs[:min(500, len(specs))]
		specs = specs[len(chunk):]
		apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: a.ID, Creates: chunk}}})
	}
	now := time.Now().UnixMilli()
	var evs []*raftv1.Event
	for i := range 3000 {
		status := []string{"complete", "complete", "fail", "run"}[i%4]
		evs = append(evs, &raftv1.Event{AccountId: a.ID, Monitor: fmt.Sprintf("job-%05d", i*2), EventType: "ping", Status: status, ReceivedUnixMs: now - int64(i)})
		if len(evs) == state.IngestBatchMaxEvents || i == 2999 {
			apply(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 100, Events: evs}}})
			evs = nil
		}
	}
	var execs []*raftv1.Execution
	for i := range 300 {
		slot := now - 60_000
		status := state.ExecSuccess
		if i%5 == 0 {
			status = state.ExecFailed
		}
		execs = append(execs, &raftv1.Execution{AccountId: a.ID, CheckUuid: fmt.Sprintf("00000000-0000-4000-9000-%012d", i*5), Region: state.RegionControl,
			SlotUnixMs: slot, StartedUnixMs: slot, FinishedUnixMs: slot + 80, DurationMs: 80, Status: status, Attempts: 1})
		if len(execs) == 16 {
			apply(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: execs, RetentionCount: 100}}})
			execs = nil
		}
	}
	if len(execs) > 0 {
		apply(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: execs, RetentionCount: 100}}})
	}
}
