package panel_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"lookout/control/admin"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// namesOn are the monitors listed on a page of the list, in order.
func namesOn(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`data-name="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// listAccount makes an account with 250 ping monitors job-000 to job-249
// ("Job N" to show), every tenth tagged nightly, in projects team-0 to
// team-2; job-200, job-201 and job-202 have failed.
func listAccount(t *testing.T, n *node) account {
	limit := int64(1000)
	a := n.signUp("ops@example.com", &admin.PlanRequest{MonitorLimit: &limit})
	var specs []*raftv1.MonitorSpec
	for i := range 250 {
		project := fmt.Sprintf("team-%d", i%3)
		tags := []string{"batch"}
		if i%10 == 0 {
			tags = append(tags, "nightly")
		}
		specs = append(specs, &raftv1.MonitorSpec{Uuid: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Kind: state.KindPing, Name: fmt.Sprintf("job-%03d", i),
			DisplayName: fmt.Sprintf("Job %d", i), Enabled: true, Tags: tags, TimeoutSeconds: 3600, Project: &project})
	}
	if res, err := n.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: a.ID, Creates: specs}}}); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("create: %v %v", res, err)
	}
	for _, name := range []string{"job-202", "job-201", "job-200"} {
		n.ping(a, `{"event_type":"ping","monitor":"`+name+`","status":"fail"}`)
	}
	return a
}

// TestMonitorListPages: the list shows 100 monitors a page, failing ones
// first then by name, with links to the other pages; a page past the last
// shows the last.
func TestMonitorListPages(t *testing.T) {
	n := newNode(t)
	a := listAccount(t, n)
	b := n.browser()
	b.signIn(a)
	p := b.get("/")
	p.want(t, http.StatusOK, "1–100 of 250 monitors", `href="/?page=2" rel="next"`, `href="/?page=3" rel="last"`, "Page 1 of 3", "<b>3</b> down", "<b>250</b> in all")
	names := namesOn(p.Body)
	if len(names) != 100 || names[0] != "job-200" || names[1] != "job-201" || names[2] != "job-202" || names[3] != "job-000" {
		t.Fatalf("first page: %d rows, starting %v", len(names), names[:min(5, len(names))])
	}
	var all []string
	for page := 1; page <= 3; page++ {
		all = append(all, namesOn(b.get(fmt.Sprintf("/?page=%d", page)).Body)...)
	}
	seen := map[string]bool{}
	for _, name := range all {
		seen[name] = true
	}
	if len(all) != 250 || len(seen) != 250 {
		t.Fatalf("three pages list %d monitors, %d of them different", len(all), len(seen))
	}
	// Job 10 sorts before Job 2 by name; each page continues the order.
	if all[3] != "job-000" || all[4] != "job-001" || all[5] != "job-010" {
		t.Fatalf("order by name: %v", all[:8])
	}
	last := b.get("/?page=99")
	last.want(t, http.StatusOK, "201–250 of 250", `href="/?page=2" rel="prev"`, `href="/" rel="first"`)
	if strings.Contains(last.Body, `rel="next"`) {
		t.Fatal("the last page links to a next one")
	}
	b.get("/?page=x").want(t, http.StatusOK, "1–100 of 250")
}

// TestMonitorListSearchAndFilters: ?q= finds names and display names
// (any case); project, tag and state filter; the filters are kept on the
// links to other pages.
func TestMonitorListSearchAndFilters(t *testing.T) {
	n := newNode(t)
	a := listAccount(t, n)
	b := n.browser()
	b.signIn(a)
	for _, tc := range []struct {
		path  string
		count int
		first string
	}{
		{"/?q=JOB-12", 10, "job-120"},
		{"/?q=job+7", 11, "job-007"}, // "Job 7", "Job 70" ... "Job 79"
		{"/?tag=nightly", 25, "job-200"},
		{"/?project=team-1", 83, "job-202"},
		{"/?state=failed", 3, "job-200"},
		{"/?state=new&tag=nightly&project=team-0", 9, "job-000"},
		{"/?q=nothing-like-this", 0, ""},
	} {
		p := b.get(tc.path)
		p.want(t, http.StatusOK)
		names := namesOn(p.Body)
		if len(names) != min(tc.count, 100) || (tc.count > 0 && names[0] != tc.first) {
			t.Fatalf("%s: %d rows %v, want %d from %s", tc.path, len(names), names[:min(3, len(names))], tc.count, tc.first)
		}
		if tc.count == 0 && !strings.Contains(p.Body, "No monitor matches") {
			t.Fatalf("%s: no empty notice", tc.path)
		}
	}
	p := b.get("/?tag=batch&q=job")
	p.want(t, http.StatusOK, "1–100 of 250", `value="job"`, `href="/?page=2&amp;q=job&amp;tag=batch" rel="next"`)
	p = b.get("/?page=3&tag=batch&q=job")
	p.want(t, http.StatusOK, "201–250 of 250", `href="/?page=2&amp;q=job&amp;tag=batch" rel="prev"`)
}
