package panel_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lookout/control/admin"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestMonitorsListFiltersAndCounts(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"complete","project":"infra"}`)
	n.ping(a, `{"event_type":"ping","monitor":"etl","status":"fail","exit_code":3}`)
	n.ping(a, `{"event_type":"ping","monitor":"report","status":"run"}`)
	if st, body := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"tagged","display_name":"Tagged job","timeout_seconds":60,"tags":["nightly"]}`); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	// Another account's monitors never show.
	other := n.signUp("other@example.com", nil)
	n.ping(other, `{"event_type":"ping","monitor":"secret-job","status":"complete"}`)

	b := n.browser()
	b.signIn(a)
	p := b.get("/")
	p.want(t, http.StatusOK, "<title>(1 down) Monitors · Lookout</title>", "<b>1</b> down", "<b>4</b> in all",
		`<span class="pill red">failed</span>`, `<span class="pill green">up</span>`, `<span class="pill blue">running</span>`, `<span class="pill gray">new</span>`,
		"Tagged job", `<option>infra</option>`, `<option>nightly</option>`)
	if !regexp.MustCompile(`>(just now|\d+s ago)</time>`).MatchString(p.Body) {
		t.Fatal("no relative last ping")
	}
	if strings.Contains(p.Body, "secret-job") {
		t.Fatal("the list shows another account's monitor")
	}
	// The failed one comes first.
	if strings.Index(p.Body, ">etl<") > strings.Index(p.Body, ">backup<") {
		t.Fatal("failed monitor not listed first")
	}

	p = b.get("/?project=infra")
	p.want(t, http.StatusOK, ">backup<")
	if strings.Contains(p.Body, ">etl<") {
		t.Fatal("project filter kept etl")
	}
	p = b.get("/?tag=nightly")
	p.want(t, http.StatusOK, "Tagged job")
	if strings.Contains(p.Body, ">backup<") {
		t.Fatal("tag filter kept backup")
	}
	p = b.get("/?state=failed")
	p.want(t, http.StatusOK, ">etl<")
	if strings.Contains(p.Body, ">backup<") {
		t.Fatal("state filter kept backup")
	}
	b.get("/?state=late").want(t, http.StatusOK, "No monitor matches")
}

func TestMonitorPage(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"run","series":"r1"}`)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"complete","series":"r1","duration":12.5,"host":"db1","message":"<b>done</b>"}`)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"skip"}`)
	n.ping(a, `{"event_type":"stream_event","monitor":"backup","state":"loading error"}`)
	n.ping(a, `{"event_type":"stream_event","monitor":"backup","state":"pending"}`)
	id := n.monitorUUID(a, "backup")

	b := n.browser()
	b.signIn(a)
	p := b.get("/monitors/" + id)
	p.want(t, http.StatusOK, "<title>backup · Lookout</title>",
		// The colours of ping statuses and of stream events by keyword.
		`<span class="pill blue">run</span>`, `<span class="pill green">complete</span>`, `<span class="pill gray">skip</span>`,
		`<span class="pill red">loading error</span>`, `<span class="pill blue">pending</span>`,
		"12.5s", "db1", "&lt;b&gt;done&lt;/b&gt;",
		// The durations chart, server-side.
		`<svg class="chart"`, `<rect class="bar green"`,
		// The live stream starts after the newest event (seq 4).
		"/monitors/"+id+"/live?next=5", `name="confirm_name"`)

	// Another account's monitor is a 404, as an unknown one.
	other := n.signUp("other@example.com", nil)
	ob := n.browser()
	ob.signIn(other)
	ob.get("/monitors/"+id).want(t, http.StatusNotFound, "Not found")
	ob.get("/monitors/"+id+"/live").want(t, http.StatusNotFound)
	b.get("/monitors/00000000-0000-0000-0000-000000000000").want(t, http.StatusNotFound, "Not found")
}

func TestCheckPageShowsItsExecutions(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	if st, body := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ssl_check","name":"cert","schedule":"0 * * * *","config":{"domain":"example.com","warning_days":30,"alert_days":7}}`); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	id := n.monitorUUID(a, "cert")
	b := n.browser()
	b.signIn(a)
	b.get("/monitors/"+id).want(t, http.StatusOK, "ssl_check", "Executions", "No finished runs yet", "next run")

	// An agent's execution names the agent, its id on hover: two agents of
	// a region may share a name.
	slot := time.Now().Truncate(time.Minute).UnixMilli()
	cmd := &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{{
		AccountId: a.ID, CheckUuid: id, Region: "eu-1", Agent: "edge", AgentId: "ag_7f3a", SlotUnixMs: slot, StartedUnixMs: slot, FinishedUnixMs: slot + 10,
		Status: "success", Attempts: 1}}}}}
	if res, err := n.Cluster.Apply(context.Background(), cmd); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("record: %v %v", res, err)
	}
	b.get("/monitors/"+id).want(t, http.StatusOK, `eu-1 · <span title="agent ag_7f3a">edge</span>`)
}

func TestLiveEventsAndResume(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"run"}`)
	id := n.monitorUUID(a, "backup")
	b := n.browser()
	b.signIn(a)

	s := b.stream("/monitors/"+id+"/live?next=1", "")
	s.next(t, "status", 2*time.Second)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"fail","message":"disk full"}`)
	ev := s.next(t, "event", 2*time.Second)
	if ev.ID != "2" || !strings.Contains(ev.Data["html"].(string), "disk full") || !strings.Contains(ev.Data["html"].(string), `pill red`) {
		t.Fatalf("live event: %+v", ev)
	}
	st := s.next(t, "status", 2*time.Second)
	if !strings.Contains(st.Data["html"].(string), "failed") {
		t.Fatalf("status after the fail: %v", st.Data["html"])
	}
	s.resp.Body.Close()

	// Two more while away; the reconnect (Last-Event-ID 2) gets exactly them.
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"run"}`)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"complete"}`)
	s = b.stream("/monitors/"+id+"/live", "2")
	first, second := s.next(t, "event", 2*time.Second), s.next(t, "event", 2*time.Second)
	if first.ID != "3" || second.ID != "4" {
		t.Fatalf("resumed with ids %s, %s; want 3, 4", first.ID, second.ID)
	}

	// The list's stream says when a monitor of the account changed.
	l := b.stream("/live", "")
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"run"}`)
	l.next(t, "changed", 2*time.Second)
}

func TestDeleteAfterTypingTheName(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"complete"}`)
	id := n.monitorUUID(a, "backup")
	b := n.browser()
	b.signIn(a)
	b.get("/monitors/" + id)

	b.post("/monitors/"+id+"/delete", url.Values{"confirm_name": {"Backup"}}).want(t, http.StatusUnprocessableEntity, "type the monitor&#39;s name")
	b.post("/monitors/"+id+"/delete", url.Values{"confirm_name": {"backup"}, "csrf": {"wrong"}}).want(t, http.StatusForbidden)
	other := n.signUp("other@example.com", nil)
	ob := n.browser()
	ob.signIn(other)
	ob.post("/monitors/"+id+"/delete", url.Values{"confirm_name": {"backup"}}).want(t, http.StatusNotFound)
	if _, err := n.Store.Monitor(a.ID, id); err != nil {
		t.Fatalf("monitor gone after refused deletes: %v", err)
	}

	p := b.post("/monitors/"+id+"/delete", url.Values{"confirm_name": {"backup"}})
	if p.Status != http.StatusSeeOther || p.Location != "/?deleted=backup" {
		t.Fatalf("delete: %d %q %s", p.Status, p.Location, p.Body)
	}
	if _, err := n.Store.Monitor(a.ID, id); err == nil {
		t.Fatal("monitor still there")
	}
	b.get("/?deleted=backup").want(t, http.StatusOK, "Deleted backup.")
}

func TestManagementAPIPanelURLOpensTheMonitor(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"complete"}`)
	id := n.monitorUUID(a, "backup")
	st, body := n.api(a, "DELETE", "/api/v1/monitors/"+id, "")
	var refused struct {
		PanelURL string `json:"panel_url"`
		Code     string `json:"code"`
	}
	json.Unmarshal(body, &refused)
	if st != 403 || refused.Code != "delete_requires_confirm" || refused.PanelURL != n.URL+"/monitors/"+id {
		t.Fatalf("DELETE without confirm: %d %s", st, body)
	}
	b := n.browser()
	b.signIn(a)
	path := strings.TrimPrefix(refused.PanelURL, n.URL)
	b.get(path).want(t, http.StatusOK, "Delete this monitor", "backup")
}

func TestKeysShownOnceAndRevoked(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	b.get("/keys").want(t, http.StatusOK, "default", "personal")

	p := b.post("/keys", url.Values{"type": {"management"}, "name": {"ci-read"}, "scope": {"read"}})
	p.want(t, http.StatusCreated, "shown only this once", "mk_")
	secret := secretIn(t, p.Body)
	// The named key works with its scope and only that.
	a2 := a
	a2.ManagementKey = secret
	if st, _ := n.api(a2, "GET", "/api/v1/monitors", ""); st != 200 {
		t.Fatalf("read with the new key: %d", st)
	}
	if st, body := n.api(a2, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"x","timeout_seconds":60}`); st != 403 || !strings.Contains(string(body), "insufficient_scope") {
		t.Fatalf("write with a read key: %d %s", st, body)
	}
	// Never shown again.
	p = b.get("/keys")
	p.want(t, http.StatusOK, "ci-read", "read")
	if strings.Contains(p.Body, secret) {
		t.Fatal("the key's secret is shown again")
	}
	// An ingest key.
	p = b.post("/keys", url.Values{"type": {"ingest"}, "name": {"cron-box"}})
	p.want(t, http.StatusCreated, "ck_")
	// Refusals keep the form.
	b.post("/keys", url.Values{"type": {"management"}, "name": {"none"}}).want(t, http.StatusBadRequest, "Scopes: must name at least one", `value="none"`)
	b.post("/keys", url.Values{"type": {"management"}, "name": {""}, "scope": {"read"}}).want(t, http.StatusBadRequest, "Name")
	b.post("/keys", url.Values{"type": {"ingest"}, "name": {"x"}, "csrf": {""}}).want(t, http.StatusForbidden)

	// Revoke: the key stops working.
	keys, _ := n.Store.Keys(a.ID)
	var keyID string
	for _, k := range keys {
		if k.GetName() == "ci-read" {
			keyID = k.GetId()
		}
	}
	// Revoke asks first: the row's button shows a confirmation; a POST
	// without it revokes nothing and shows the confirmation again.
	b.get("/keys").want(t, http.StatusOK, `<input type="hidden" name="revoke" value="`+keyID+`">`)
	b.get("/keys?revoke="+keyID).want(t, http.StatusOK, "Revoke the management key “ci-read”?", `name="confirm" value="yes"`, `action="/keys/`+keyID+`/revoke"`)
	b.post("/keys/"+keyID+"/revoke", nil).want(t, http.StatusUnprocessableEntity, "Revoke the management key “ci-read”?")
	if st, _ := n.api(a2, "GET", "/api/v1/monitors", ""); st != 200 {
		t.Fatalf("the key stopped working without a confirmation: %d", st)
	}
	b.get("/keys?revoke=no-such-key").want(t, http.StatusNotFound)
	p = b.post("/keys/"+keyID+"/revoke", url.Values{"confirm": {"yes"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("revoke: %d %s", p.Status, p.Body)
	}
	if st, _ := n.api(a2, "GET", "/api/v1/monitors", ""); st != 401 {
		t.Fatalf("revoked key: %d, want 401", st)
	}
	if strings.Contains(b.get("/keys").Body, "ci-read") {
		t.Fatal("revoked key still listed")
	}
	// Another account's key is not found.
	other := n.signUp("other@example.com", nil)
	okeys, _ := n.Store.Keys(other.ID)
	b.get("/keys")
	b.post("/keys/"+okeys[0].GetId()+"/revoke", url.Values{"confirm": {"yes"}}).want(t, http.StatusNotFound)
	b.post("/keys/"+okeys[0].GetId()+"/revoke", nil).want(t, http.StatusNotFound)
}

// Keys show when they were made and when they were last used ("never"
// before any use).
func TestKeysShowCreatedAndLastUsed(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	p := b.get("/keys")
	p.want(t, http.StatusOK, "<th>Created</th><th>Last used</th>", `<td data-label="Last used">never</td>`)
	if strings.Count(p.Body, `<td data-label="Created"><time datetime="`) != 2 {
		t.Fatalf("the two keys' creation times are not shown:\n%s", p.Body)
	}
	// A request with the management key records its use.
	if st, _ := n.api(a, "GET", "/api/v1/monitors", ""); st != 200 {
		t.Fatalf("GET monitors: %d", st)
	}
	p = b.get("/keys")
	if strings.Count(p.Body, `<td data-label="Last used"><time datetime="`) != 1 || strings.Count(p.Body, `<td data-label="Last used">never</td>`) != 1 {
		t.Fatalf("after one use of the management key:\n%s", p.Body)
	}
}

func secretIn(t *testing.T, body string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, `<code class="secret-value" id="secret">`)
	if !ok {
		t.Fatalf("no secret on the page:\n%s", body)
	}
	return html.UnescapeString(rest[:strings.Index(rest, "<")]) // a "+" is written &#43;
}

func TestChannelsGroupsAndTest(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	var got atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got.Add(1)
	}))
	defer receiver.Close()
	b := n.browser()
	b.signIn(a)
	b.get("/channels").want(t, http.StatusOK, "No channels yet", "No groups yet", `<option value="webhook">Webhook</option>`)

	p := b.post("/channels", url.Values{"type": {"webhook"}, "name": {"ops hook"}, "webhook.url": {receiver.URL}, "default": {"on"}})
	p.want(t, http.StatusCreated, "Channel ops hook created.", "whsec_", "ops hook")

	chans, _ := n.Store.Channels(a.ID)
	b.post("/channels/"+chans[0].GetId()+"/test", nil).want(t, http.StatusOK, "Test message delivered.")
	if got.Load() != 1 {
		t.Fatalf("the receiver got %d requests, want 1", got.Load())
	}
	other := n.signUp("other@example.com", nil)
	ob := n.browser()
	ob.signIn(other)
	ob.get("/channels")
	ob.post("/channels/"+chans[0].GetId()+"/test", nil).want(t, http.StatusNotFound)

	b.post("/groups", url.Values{"name": {"on-call"}, "channel": {chans[0].GetId()}}).
		want(t, http.StatusCreated, "Notification group on-call created.", "ops hook (webhook)")
	b.post("/groups", url.Values{"name": {"on-call"}}).want(t, http.StatusBadRequest, "A notification group named")
}

func TestAccountPageShowsOverage(t *testing.T) {
	n := newNode(t)
	limit, monitors := int64(2), int64(10)
	a := n.signUp("ops@example.com", &admin.PlanRequest{MonthlyEventLimit: &limit, MonitorLimit: &monitors})
	b := n.browser()
	b.signIn(a)
	b.get("/account").want(t, http.StatusOK, "ops@example.com", `id="quota">ok<`, "of 2 (0%)", "0</dd>")
	for range 3 {
		n.ping(a, `{"event_type":"ping","monitor":"backup","status":"complete"}`)
	}
	p := b.get("/account")
	p.want(t, http.StatusOK, `id="quota">exceeded<`, `<b>1</b> events over the allowance`, "1 of 10")
}

func TestAPIsStillServedBesideThePanel(t *testing.T) {
	n := newNode(t)
	for path, want := range map[string]int{
		"/health": 200, "/api/v1/monitors": 401, "/admin/v1/cluster": 401,
		"/static/style.css": 200, "/static/live.js": 200, "/nope": 404, "/login": 200,
	} {
		resp, err := http.Get(n.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// TestOfflineRegionShowsUnknown: a check all of whose agent regions are
// offline shows unknown in the list, as the Management API says, not the
// last verdict.
func TestOfflineRegionShowsUnknown(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	if st, body := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"http_check","name":"site","schedule":"5m","regions":["eu-1"],"config":{"url":"https://example.com/","method":"GET","timeout":5,"expected_status":200}}`); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	b := n.browser()
	b.signIn(a)
	b.get("/").want(t, http.StatusOK, `<span class="pill gray">pending</span>`)
	cmd := &raftv1.Command{Op: &raftv1.Command_SetRegionState{SetRegionState: &raftv1.SetRegionState{Region: "eu-1", Offline: true, SinceUnixMs: 1, Done: true}}}
	if res, err := n.Cluster.Apply(context.Background(), cmd); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("region offline: %v %v", res, err)
	}
	b.get("/").want(t, http.StatusOK, `<span class="pill gray">unknown</span>`)
	if st, body := n.api(a, "GET", "/api/v1/monitors/"+n.monitorUUID(a, "site"), ""); st != 200 || !strings.Contains(string(body), `"state":"unknown"`) {
		t.Fatalf("the Management API: %d %s", st, body)
	}
}

// A tcp_check's and a dns_check's executions show their details; an
// http_check with tls_skip_verify carries a warning, and shows none of
// its secrets.
func TestCheckPageShowsNewKindsAndWarns(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	for _, m := range []string{
		`{"manifest_version":1,"kind":"tcp_check","name":"db","schedule":"1h","config":{"host":"db.example.com","port":5432}}`,
		`{"manifest_version":1,"kind":"dns_check","name":"www","schedule":"1h","config":{"name":"www.example.com"}}`,
		`{"manifest_version":1,"kind":"http_check","name":"insecure","schedule":"1h","config":{"url":"https://self-signed.example.com/","expected_status":200,"tls_skip_verify":true,"headers":{"Authorization":"Bearer t0psecret"}}}`,
		`{"manifest_version":1,"kind":"http_check","name":"verified","schedule":"1h","config":{"url":"https://example.com/","expected_status":200}}`,
	} {
		if st, body := n.api(a, "POST", "/api/v1/monitors", m); st != 201 {
			t.Fatalf("create: %d %s", st, body)
		}
	}
	slot := time.Now().Truncate(time.Minute).UnixMilli()
	record := func(e *raftv1.Execution) {
		e.AccountId, e.SlotUnixMs, e.StartedUnixMs, e.FinishedUnixMs, e.Region, e.Attempts = a.ID, slot, slot, slot+5, "control", 1
		cmd := &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{e}}}}
		if res, err := n.Cluster.Apply(context.Background(), cmd); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("record: %v %v", res, err)
		}
	}
	db, www := n.monitorUUID(a, "db"), n.monitorUUID(a, "www")
	record(&raftv1.Execution{CheckUuid: db, Status: "success", Tcp: &raftv1.ExecutionTCP{ConnectMs: 7}})
	record(&raftv1.Execution{CheckUuid: www, Status: "failed", Error: "192.0.2.9 is not among the A records of www.example.com (192.0.2.1, 192.0.2.2)",
		Dns: &raftv1.ExecutionDNS{Answers: []string{"192.0.2.1", "192.0.2.2"}, RttMs: 3}})
	b := n.browser()
	b.signIn(a)
	b.get("/monitors/"+db).want(t, http.StatusOK, "tcp_check", "connect 7\u00a0ms")
	b.get("/monitors/"+www).want(t, http.StatusOK, "dns_check", "rtt 3\u00a0ms", "<code>192.0.2.1</code>, <code>192.0.2.2</code>", "is not among the A records")
	insecure := b.get("/monitors/" + n.monitorUUID(a, "insecure"))
	insecure.want(t, http.StatusOK, `id="tls-skip-verify"`, "does not verify the certificate")
	if strings.Contains(insecure.Body, "t0psecret") {
		t.Fatal("the page shows a secret")
	}
	if strings.Contains(b.get("/monitors/"+n.monitorUUID(a, "verified")).Body, `id="tls-skip-verify"`) {
		t.Fatal("a verified check carries the warning")
	}
}
