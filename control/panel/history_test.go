package panel_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// seqsOn are the event seqs of a monitor page's log, in page order.
func seqsOn(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`data-seq="(\d+)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestEventsInPages: a monitor with 250 events shows the newest 100, then
// older pages of 100 through "Older" links, to the first event; only the
// newest page takes live rows.
func TestEventsInPages(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	at := time.Now().Add(-time.Hour).UnixMilli()
	for start := 0; start < 250; start += 125 {
		var evs []*raftv1.Event
		for i := start; i < start+125; i++ {
			evs = append(evs, &raftv1.Event{AccountId: a.ID, Monitor: "backup", EventType: "ping", Status: "complete", ReceivedUnixMs: at + int64(i)})
		}
		if res, err := n.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 1000, Events: evs}}}); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("ingest: %v %v", res, err)
		}
	}
	id := n.monitorUUID(a, "backup")
	b := n.browser()
	b.signIn(a)
	var all []string
	path := "/monitors/" + id
	for page := 0; ; page++ {
		p := b.get(path)
		p.want(t, http.StatusOK)
		seqs := seqsOn(p.Body)
		all = append(all, seqs...)
		if newest := strings.Contains(p.Body, `<tbody id="events">`); newest != (page == 0) {
			t.Fatalf("page %d takes live rows: %v", page, newest)
		}
		if page > 0 && !strings.Contains(p.Body, `<a href="/monitors/`+id+`" rel="first">`) {
			t.Fatalf("page %d has no link to the newest", page)
		}
		m := regexp.MustCompile(`href="(/monitors/[^"]+\?before=\d+)" rel="next"`).FindStringSubmatch(p.Body)
		if m == nil {
			if len(seqs) != 50 {
				t.Fatalf("the last page has %d events", len(seqs))
			}
			break
		}
		if len(seqs) != 100 || page > 3 {
			t.Fatalf("page %d: %d events", page, len(seqs))
		}
		path = m[1]
	}
	for i, s := range all {
		if s != fmt.Sprint(249-i) {
			t.Fatalf("event %d on the pages is seq %s", i, s)
		}
	}
	b.get("/monitors/"+id+"?before=x").want(t, http.StatusBadRequest)
}

// TestExecutionsInPages: a check with 130 executions shows the newest
// 100, then the other 30.
func TestExecutionsInPages(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	if st, body := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"http_check","name":"site","schedule":"1m","config":{"url":"https://example.com","expected_status":200}}`); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	id := n.monitorUUID(a, "site")
	slot0 := time.Now().Truncate(time.Minute).Add(-200 * time.Minute).UnixMilli()
	for start := 0; start < 130; start += 10 {
		var execs []*raftv1.Execution
		for i := start; i < start+10; i++ {
			slot := slot0 + int64(i)*60_000
			execs = append(execs, &raftv1.Execution{AccountId: a.ID, CheckUuid: id, Region: state.RegionControl, SlotUnixMs: slot, StartedUnixMs: slot,
				FinishedUnixMs: slot + 20, DurationMs: 20, Status: state.ExecSuccess, Attempts: 1})
		}
		if res, err := n.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: execs, RetentionCount: 1000}}}); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("record: %v %v", res, err)
		}
	}
	b := n.browser()
	b.signIn(a)
	rows := regexp.MustCompile(`<td data-label="Slot">`)
	p := b.get("/monitors/" + id)
	if got := len(rows.FindAllString(p.Body, -1)); got != 100 || !strings.Contains(p.Body, `<tbody id="executions">`) {
		t.Fatalf("newest page: %d executions", got)
	}
	older := fmt.Sprintf(`href="/monitors/%s?before=%d.control" rel="next"`, id, slot0+30*60_000)
	if !strings.Contains(p.Body, older) {
		t.Fatalf("no %s on the page", older)
	}
	p = b.get(fmt.Sprintf("/monitors/%s?before=%d.control", id, slot0+30*60_000))
	if got := len(rows.FindAllString(p.Body, -1)); got != 30 || strings.Contains(p.Body, `rel="next"`) || strings.Contains(p.Body, `<tbody id="executions">`) {
		t.Fatalf("older page: %d executions\n%s", got, p.Body)
	}
}
