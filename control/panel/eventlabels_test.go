package panel_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

// TestEveryEventTypeHasALabelAndAColour renders one event of each type the
// state records: each ping status, stream events of each colour, a custom
// type (with a status and without), and the engine's missed run. Each row
// has a pill with its label and colour, never an empty one.
func TestEveryEventTypeHasALabelAndAColour(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	if st, body := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"job","timeout_seconds":3600,"expected_interval_seconds":60}`); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	hourAgo := time.Now().Add(-time.Hour).Unix()
	events := []struct {
		body, label, color, note string
	}{
		{`"event_type":"ping","status":"run"`, "run", "blue", ""},
		{`"event_type":"ping","status":"complete"`, "complete", "green", ""},
		{`"event_type":"ping","status":"fail"`, "fail", "red", ""},
		{`"event_type":"ping","status":"skip"`, "skip", "gray", ""},
		{`"event_type":"stream_event","state":"deploy successful"`, "deploy successful", "green", "stream"},
		{`"event_type":"stream_event","state":"build failed"`, "build failed", "red", "stream"},
		{`"event_type":"stream_event","state":"starting"`, "starting", "blue", "stream"},
		{`"event_type":"stream_event","state":"queued"`, "queued", "gray", "stream"},
		{`"event_type":"backup-verify"`, "backup-verify", "gray", ""},
		{`"event_type":"deploy","status":"complete"`, "deploy", "gray", "complete"},
	}
	for i, e := range events {
		// The last one, an hour ago, is the ping the missed run follows.
		n.ping(a, fmt.Sprintf(`{%s,"monitor":"job","timestamp":%d}`, e.body, hourAgo-int64(len(events)-i)))
	}
	n.ping(a, fmt.Sprintf(`{"event_type":"ping","monitor":"job","status":"complete","timestamp":%d}`, hourAgo))
	id := n.monitorUUID(a, "job")
	m, err := n.Store.Monitor(a.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	_, _, due := pingstate.Deadlines(state.PingSettings(m), state.PingState(m))
	if res, err := n.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_FireDeadline{FireDeadline: &raftv1.FireDeadline{
		AccountId: a.ID, MonitorUuid: id, Kind: pingstate.DeadlineMissed, DueUnixMs: due}}}); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK || res.GetStale() {
		t.Fatalf("fire the missed deadline at %d: %v %v", due, res, err)
	}
	b := n.browser()
	b.signIn(a)
	p := b.get("/monitors/" + id)
	p.want(t, http.StatusOK)
	events = append(events, struct{ body, label, color, note string }{"missed", "missed", "red", "no ping by the deadline"})
	for _, e := range events {
		pill := `<span class="pill ` + e.color + `">` + e.label + `</span>`
		if e.note != "" {
			pill += ` <span class="muted small">` + e.note + `</span>`
		}
		if !strings.Contains(p.Body, pill) {
			t.Errorf("%s: no %s on the page", e.body, pill)
		}
	}
	if strings.Contains(p.Body, `"></span></td>`) {
		t.Fatal("an event with an empty pill")
	}
}
