package panel_test

import (
	"context"
	"fmt"
	"lookout/internal/probe/probetest"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

// TestCheckPageSaysWhatItChecks: an http_check's page names its request,
// assertions, timeout, schedule and regions; an ssl_check's its domain and
// thresholds.
func TestCheckPageSaysWhatItChecks(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	for _, body := range []string{
		`{"manifest_version":1,"kind":"http_check","name":"shop","schedule":"*/5 * * * *","regions":["eu-1","us-1"],"confirm_regions":2,"config":{"url":"https://shop.example.com/health","method":"head","expected_status":204,"expected_content":"ok","timeout":7}}`,
		`{"manifest_version":1,"kind":"ssl_check","name":"cert","schedule":"1h","config":{"domain":"example.com","warning_days":21,"alert_days":5}}`,
	} {
		if st, b := n.api(a, "POST", "/api/v1/monitors", body); st != 201 {
			t.Fatalf("create: %d %s", st, b)
		}
	}
	b := n.browser()
	b.signIn(a)
	b.get("/monitors/"+n.monitorUUID(a, "shop")).want(t, http.StatusOK, "What it checks",
		"<code>HEAD https://shop.example.com/health</code>", "status 204 and content containing “ok”", "<dd>7 s</dd>",
		"<code>*/5 * * * *</code> <span class=\"muted small\">cron, UTC</span>", "eu-1, us-1 <span class=\"muted small\">2 must see it fail</span>")
	b.get("/monitors/"+n.monitorUUID(a, "cert")).want(t, http.StatusOK, "What it checks",
		"<code>example.com:443</code>", "warning under 21 days left, alert under 5", "<span class=\"muted small\">every 1h</span>", "the control plane")
}

// TestRefusedConnectionSaysSo: an execution refused at connect shows
// "connection refused", not a row of zero timings; an answer's timings
// leave out the phases that did not happen.
func TestRefusedConnectionSaysSo(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	if st, body := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"http_check","name":"site","schedule":"1m","config":{"url":"http://203.0.113.7/","expected_status":200}}`); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	id := n.monitorUUID(a, "site")
	slot := time.Now().Truncate(time.Minute).UnixMilli()
	execs := []*raftv1.Execution{
		{AccountId: a.ID, CheckUuid: id, Region: state.RegionControl, SlotUnixMs: slot - 60_000, StartedUnixMs: slot - 60_000, FinishedUnixMs: slot - 59_900, DurationMs: 45,
			Status: state.ExecSuccess, Attempts: 1, Http: &raftv1.ExecutionHTTP{StatusCode: 200, ConnectMs: 12, TtfbMs: 30, TotalMs: 45}},
		{AccountId: a.ID, CheckUuid: id, Region: state.RegionControl, SlotUnixMs: slot, StartedUnixMs: slot, FinishedUnixMs: slot + 7000, DurationMs: 0,
			Status: state.ExecFailed, Attempts: 4, Error: "cannot connect to 203.0.113.7:80: connection refused", ErrorKind: "connect", Http: &raftv1.ExecutionHTTP{}},
	}
	if res, err := n.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: execs}}}); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("record: %v %v", res, err)
	}
	b := n.browser()
	b.signIn(a)
	p := b.get("/monitors/" + id)
	p.want(t, http.StatusOK, `<td data-label="Timings">connection refused</td>`, `<td data-label="Timings">200 · connect 12 · ttfb 30 · total 45`+"\u00a0"+`ms</td>`)
	if strings.Contains(p.Body, "dns 0") || strings.Contains(p.Body, "0 · dns") {
		t.Fatal("zero timings of phases that did not happen")
	}
}

// nextOn is the "next" of the only monitor of a page: on the list its
// cell, on a monitor's page its fact.
func nextOn(t *testing.T, body string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)(?:<td data-label="Next">|<dt>Next</dt><dd>)(.*?)</(?:td|dd)>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no next on the page:\n%s", body)
	}
	return regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[1], "")
}

// TestNextReadsTheSameOnTheListAndThePage: a monitor's "next" is in the
// same words on the list and on its page, for each case; a down monitor
// shows when it is next expected, not "–".
func TestNextReadsTheSameOnTheListAndThePage(t *testing.T) {
	n := newNode(t)
	hourAgo := time.Now().Add(-time.Hour).Unix()
	for _, tc := range []struct {
		name  string
		setup func(a account) string
		want  *regexp.Regexp
	}{
		{"ping expected", func(a account) string {
			n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"job","timeout_seconds":60,"expected_interval_seconds":3600}`)
			n.ping(a, `{"event_type":"ping","monitor":"job","status":"complete"}`)
			return "job"
		}, regexp.MustCompile(`^in (59m|1h) ping expected$`)},
		{"run must finish", func(a account) string {
			n.ping(a, `{"event_type":"ping","monitor":"job","status":"run"}`)
			return "job"
		}, regexp.MustCompile(`^in 5\dm run must finish$`)},
		{"no interval", func(a account) string {
			n.ping(a, `{"event_type":"ping","monitor":"job","status":"complete"}`)
			return "job"
		}, regexp.MustCompile(`^– no expected interval$`)},
		{"down after a missed run", func(a account) string {
			n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"job","timeout_seconds":60,"expected_interval_seconds":900}`)
			n.ping(a, fmt.Sprintf(`{"event_type":"ping","monitor":"job","status":"complete","timestamp":%d}`, hourAgo))
			id := n.monitorUUID(a, "job")
			m, _ := n.Store.Monitor(a.ID, id)
			_, _, due := pingstate.Deadlines(state.PingSettings(m), state.PingState(m))
			if res, err := n.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_FireDeadline{FireDeadline: &raftv1.FireDeadline{
				AccountId: a.ID, MonitorUuid: id, Kind: pingstate.DeadlineMissed, DueUnixMs: due}}}); err != nil || res.GetStale() {
				t.Fatalf("fire: %v %v", res, err)
			}
			if m, _ := n.Store.Monitor(a.ID, id); state.PingState(m).State != pingstate.Down {
				t.Fatalf("state %s, want down", state.PingState(m).State)
			}
			return "job"
		}, regexp.MustCompile(`^in 1[0-5]m ping expected$`)},
		{"never pinged", func(a account) string {
			n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"job","timeout_seconds":60,"expected_interval_seconds":900}`)
			return "job"
		}, regexp.MustCompile(`^– waiting for a first ping$`)},
		{"paused", func(a account) string {
			n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"job","timeout_seconds":60,"expected_interval_seconds":900,"enabled":false}`)
			return "job"
		}, regexp.MustCompile(`^– paused$`)},
		{"check", func(a account) string {
			n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"http_check","name":"site","schedule":"1h","regions":["eu-1"],"config":{"url":"https://example.com","expected_status":200}}`)
			return "site"
		}, regexp.MustCompile(`^in (\d+s|\d+m|1h) next run$`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := n.signUp(strings.ReplaceAll(tc.name, " ", "-")+"@example.com", nil)
			name := tc.setup(a)
			b := n.browser()
			b.signIn(a)
			list, page := nextOn(t, b.get("/").Body), nextOn(t, b.get("/monitors/"+n.monitorUUID(a, name)).Body)
			if list != page || !tc.want.MatchString(list) {
				t.Fatalf("next on the list %q, on the page %q; want both to match %s", list, page, tc.want)
			}
		})
	}
}

// TestCheckPageSaysWhatEveryKindChecks: the "What it checks" of an
// http_check with options names its headers (never their values), its
// assertions and how it trusts the server; a tcp_check's says where it
// connects and what it expects; a dns_check's the question it asks.
func TestCheckPageSaysWhatEveryKindChecks(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	ca := probetest.NewRoot(t, "corp root", probetest.For(365*probetest.Day))
	for _, m := range []string{
		`{"manifest_version":1,"kind":"http_check","name":"api","schedule":"1m","config":{"url":"https://api.example.com/health","method":"POST","body":"{}","headers":{"Authorization":"Bearer s3cr3t-t0ken","X-Trace":"1"},"expected_status":"2xx","json_path":[{"path":"$.status","equals":"ok"}],"max_response_ms":800,"ca":` + asJSON(ca.PEM()) + `}}`,
		`{"manifest_version":1,"kind":"tcp_check","name":"redis","schedule":"1m","config":{"host":"redis.example.com","port":6379,"send":"PING\r\n","expect":"+PONG"}}`,
		`{"manifest_version":1,"kind":"dns_check","name":"www","schedule":"5m","config":{"name":"www.example.com","type":"AAAA","server":"192.0.2.53","expected":["2001:db8::1"]}}`,
	} {
		if st, body := n.api(a, "POST", "/api/v1/monitors", m); st != 201 {
			t.Fatalf("create: %d %s", st, body)
		}
	}
	b := n.browser()
	b.signIn(a)
	api := b.get("/monitors/" + n.monitorUUID(a, "api"))
	api.want(t, http.StatusOK, "POST https://api.example.com/health", "headers Authorization, X-Trace", "a body of 2 bytes",
		"status 2xx", "$.status = &#34;ok&#34;", "an answer within 800 ms", "the system roots and the check&#39;s own CA")
	if strings.Contains(api.Body, "s3cr3t") {
		t.Fatal("the page shows a secret header's value")
	}
	b.get("/monitors/"+n.monitorUUID(a, "redis")).want(t, http.StatusOK, "redis.example.com:6379", `&#34;PING\r\n&#34;`, "an answer containing &#34;&#43;PONG&#34;")
	b.get("/monitors/"+n.monitorUUID(a, "www")).want(t, http.StatusOK, "AAAA www.example.com @192.0.2.53", "answers including 2001:db8::1")
}
