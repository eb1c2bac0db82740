package panel_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestChartsHaveAxesInTheirUnits: millisecond runs chart in ms (not
// "0.00s"), and a check's refused connections are marks, not a 1 s bar.
func TestChartsHaveAxesInTheirUnits(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"quick","status":"complete","duration":0.004}`)
	n.ping(a, `{"event_type":"ping","monitor":"quick","status":"complete","duration":0.012}`)
	if st, body := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"http_check","name":"site","schedule":"1m","config":{"url":"https://example.com","expected_status":200}}`); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	id := n.monitorUUID(a, "site")
	slot := time.Now().Truncate(time.Minute).Add(-time.Minute).UnixMilli()
	execs := []*raftv1.Execution{
		{AccountId: a.ID, CheckUuid: id, Region: state.RegionControl, SlotUnixMs: slot - 60_000, StartedUnixMs: slot - 60_000, FinishedUnixMs: slot - 59_900,
			Status: state.ExecSuccess, Attempts: 1, DurationMs: 90, Http: &raftv1.ExecutionHTTP{StatusCode: 200, TotalMs: 90}},
		{AccountId: a.ID, CheckUuid: id, Region: state.RegionControl, SlotUnixMs: slot, StartedUnixMs: slot, FinishedUnixMs: slot + 1,
			Status: state.ExecFailed, Attempts: 4, Error: "dial tcp 93.184.215.14:443: connect: connection refused", ErrorKind: "connection"},
	}
	if res, err := n.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: execs}}}); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("record: %v %v", res, err)
	}
	b := n.browser()
	b.signIn(a)
	p := b.get("/monitors/" + n.monitorUUID(a, "quick"))
	p.want(t, http.StatusOK, `text-anchor="end">15 ms</text>`, `text-anchor="end">0 ms</text>`, "Run durations in ms", "the longest 12 ms")
	if strings.Contains(p.Body, "0.00s") || strings.Contains(p.Body, "tallest bar") {
		t.Fatal("millisecond runs labelled in seconds")
	}
	p = b.get("/monitors/" + id)
	p.want(t, http.StatusOK, "Response times in ms", "the longest 90 ms", "1 without a response", `text-anchor="end">100 ms</text>`)
	if strings.Contains(p.Body, "1.00s") {
		t.Fatal("a refused connection charted as 1 s")
	}
}
