package manage_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestEventsBeforeReadsAWholeHistory reads 2,500 events of one monitor,
// more than one page can hold, page by page with next_before: every event
// once, newest first, and no next_before on the last page.
func TestEventsBeforeReadsAWholeHistory(t *testing.T) {
	f := newFixture(t) // backup has 3 events
	const extra = 2500
	at := f.srv.Now.UnixMilli() + 10_000
	for start := 0; start < extra; start += state.IngestBatchMaxEvents {
		var evs []*raftv1.Event
		for i := start; i < min(start+state.IngestBatchMaxEvents, extra); i++ {
			evs = append(evs, &raftv1.Event{AccountId: f.acct.ID, Monitor: "backup", EventType: "ping", Status: "complete",
				Message: strconv.Itoa(i), ReceivedUnixMs: at + int64(i)})
		}
		if res, err := f.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10_000, Events: evs}}}); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("ingest: %v %v", res, err)
		}
	}
	path := "/api/v1/monitors/" + f.monitor + "/events?limit=1000"
	var messages, cursors []string
	pages := 0
	for next := ""; ; pages++ {
		p := path
		if next != "" {
			p += "&before=" + next
		}
		status, body := f.get(t, p, f.acct.ManagementKey)
		if status != http.StatusOK {
			t.Fatalf("page %d: %d %v", pages, status, body)
		}
		for _, e := range body["events"].([]any) {
			m, _ := e.(map[string]any)["message"].(string)
			messages = append(messages, m)
		}
		cursor, more := body["next_before"].(string)
		if !more {
			break
		}
		next = cursor
		cursors = append(cursors, cursor)
	}
	if pages != 2 || len(messages) != extra+3 {
		t.Fatalf("%d pages, %d events; want 3 pages of %d events", pages+1, len(messages), extra+3)
	}
	for i := range extra {
		if want := strconv.Itoa(extra - 1 - i); messages[i] != want {
			t.Fatalf("event %d is %q, want %q", i, messages[i], want)
		}
	}
	if messages[extra] != "disk full" {
		t.Fatalf("the oldest page ends with %v", messages[extra:])
	}
	// A page that ends exactly at the oldest event has no next_before.
	status, body := f.get(t, "/api/v1/monitors/"+f.monitor+"/events?limit=503&before="+cursors[1], f.acct.ManagementKey)
	if status != http.StatusOK || len(body["events"].([]any)) != 503 || body["next_before"] != nil {
		t.Fatalf("last exact page: %d %v", status, body)
	}
	for _, bad := range []string{"not*base64!", "AAAA", "AAAAAAAAAAAAAA"} {
		if status, body := f.get(t, path+"&before="+bad, f.acct.ManagementKey); status != http.StatusBadRequest || body["code"] != "invalid_request" {
			t.Fatalf("before=%s: %d %v", bad, status, body)
		}
	}
}

// TestExecutionsBeforePages reads a check's executions of two regions two
// at a time: every one once, newest slot first.
func TestExecutionsBeforePages(t *testing.T) {
	a := newAPI(t)
	status, m, _ := a.do("POST", "/api/v1/monitors", httpCheck("site", "https://example.com/"))
	if status != 201 {
		t.Fatalf("create: %d %v", status, m)
	}
	id := m["uuid"].(string)
	var execs []*raftv1.Execution
	for i := range int64(3) {
		for _, region := range []string{"eu-1", "us-1"} {
			slot := a.srv.Now.UnixMilli() + i*60_000
			execs = append(execs, &raftv1.Execution{AccountId: a.acct.ID, CheckUuid: id, Region: region, SlotUnixMs: slot, StartedUnixMs: slot,
				FinishedUnixMs: slot + 5, Status: state.ExecSuccess, Attempts: 1})
		}
	}
	if res, err := a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: execs}}}); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("record: %v %v", res, err)
	}
	var got []string
	next := ""
	for range 5 {
		p := "/api/v1/monitors/" + id + "/executions?limit=2"
		if next != "" {
			p += "&before=" + next
		}
		status, body, _ := a.do("GET", p, nil)
		if status != 200 {
			t.Fatalf("%d %v", status, body)
		}
		for _, e := range body["executions"].([]any) {
			e := e.(map[string]any)
			got = append(got, e["slot"].(string)+" "+e["region"].(string))
		}
		c, more := body["next_before"].(string)
		if !more {
			break
		}
		next = c
	}
	if len(got) != 6 {
		t.Fatalf("executions %v", got)
	}
	seen := map[string]bool{}
	for i, g := range got {
		if seen[g] || (i > 0 && got[i-1] <= g) {
			t.Fatalf("not newest first, each once: %v", got)
		}
		seen[g] = true
	}
	if status, body, _ := a.do("GET", "/api/v1/monitors/"+id+"/executions?before=!!", nil); status != 400 || body["code"] != "invalid_request" {
		t.Fatalf("bad before: %d %v", status, body)
	}
}
