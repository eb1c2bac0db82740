package openapi_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"lookout/cluster"
	"lookout/control/controltest"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// endpointCase is one real request to the APIs. Its request and answer are
// both checked against the document.
type endpointCase struct {
	name   string
	method string
	// path is the path with its query, as sent.
	path    string
	headers http.Header
	body    string
	// status is the status the handler must answer.
	status int
	// contains, when set, must be in the answer's body (to tell apart
	// answers of one status, such as success and suspended).
	contains string
	// invalidRequest says the request breaks a rule the document states,
	// so the document must reject it as the handler does. Without it, the
	// document must accept the request.
	invalidRequest bool
	// unrouted names the components/responses entry that the answer must
	// match when the document has no operation for the method and path
	// (a path that is no endpoint, a method the path does not have).
	unrouted string
	// setup runs before the request; the function it returns, after.
	setup func(f *fixture) (undo func())
	// deviation, when set, says why the handler does not answer as the
	// contract (and the case) says. The case then passes while the handler
	// answers otherwise, and fails once it answers as the contract says, so
	// that the deviation is taken out.
	deviation string
}

// notYetServed are the operations of the document that no handler serves
// yet ("METHOD /path" as the document writes it). TestEveryOperationIsExercised
// fails when one of them is served, until its cases are in the table and it
// is taken out of here. Every operation is served today.
var notYetServed = map[string]bool{}

// headerDeviation is a known place where a handler's answers disagree with
// the contract, which the document follows: a header the document requires
// and the handler does not send. The test tolerates exactly these (filling
// the header in, so that the rest of the answer is still checked), and
// fails when one no longer occurs, so that it is taken off the list.
type headerDeviation struct {
	pathPrefix string
	header     string
	why        string
}

// knownHeaderDeviations is empty today. (Until control/manage had its rate
// limiter, it held the X-RateLimit-* headers of /api/v1/.)
var knownHeaderDeviations = []headerDeviation{}

// cases is the table of every endpoint served today, with success and
// each error class. To cover a new endpoint, add its lines here (and take
// it out of notYetServed).
func cases(f *fixture) []endpointCase {
	ck := f.main.IngestKey
	admin := controltest.Token
	mk := f.main.ManagementKey
	mon := "/api/v1/monitors"
	events := mon + "/" + f.monitor + "/events"
	nightly, homepage, cert, doomed := mon+"/"+f.nightly, mon+"/"+f.homepage, mon+"/"+f.cert, mon+"/"+f.doomed
	executions := homepage + "/executions"
	// The before of cert's page after its newest execution: its slot
	// (recordExecutions) and region, opaque to clients.
	certBefore := base64.RawURLEncoding.EncodeToString(append(binary.BigEndian.AppendUint64(nil, uint64(f.srv.Now.UnixMilli())), state.RegionControl...))
	bundle := `{"manifest_version":1,"monitors":[{"kind":"ping","name":"backup","timeout_seconds":7200,"tags":["db"]},{"kind":"http_check","name":"applied","schedule":"1h","config":{"url":"https://example.org/","expected_content":"ok"}}]}`
	acct := "/admin/v1/accounts/" + f.main.ID
	users := "/admin/v1/accounts/" + f.other.ID + "/users"
	unknownID := uuid.NewString()
	huge := strings.Repeat("x", 1<<20)
	mw := "/api/v1/maintenance-windows"
	windowBody := `{"name":"patching","schedule":"0 2 * * 2","duration_seconds":7200,"timezone":"Europe/Berlin","match":{"tags":["db"]}}`
	window := mw + "/" + f.mustWindow(windowBody)
	doomedWindow := mw + "/" + f.mustWindow(windowBody)
	backup := backupOf(f)

	failApply := func(err error) func(f *fixture) func() {
		return func(f *fixture) func() {
			f.srv.Cluster.FailApply(err)
			return func() { f.srv.Cluster.FailApply(nil) }
		}
	}
	failReads := func(err error) func(f *fixture) func() {
		return func(f *fixture) func() {
			f.srv.Cluster.FailReads(err)
			return func() { f.srv.Cluster.FailReads(nil) }
		}
	}
	noLeader := cluster.ErrNoLeader
	agentToken := func(id string) func(f *fixture) func() {
		return func(f *fixture) func() {
			res, err := f.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_CreateAgentToken{CreateAgentToken: &raftv1.CreateAgentToken{
				Id: id, Region: "eu-1", Name: "factory", Hash: []byte(id)}}})
			if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
				f.t.Fatalf("create agent token: %v %v", res, err)
			}
			return func() {}
		}
	}
	agentTokenID, rotatedTokenID := uuid.NewString(), uuid.NewString()
	withAgentToken := agentToken(agentTokenID)
	broken := errors.New("disk on fire")
	// Bounds of what one raft command holds (state.Max...).
	pings := make([]string, state.MaxPutMonitors+1)
	for i := range pings {
		pings[i] = fmt.Sprintf(`{"kind":"ping","name":"bulk-%d","timeout_seconds":60}`, i)
	}
	tooManyChanges := `{"manifest_version":1,"monitors":[` + strings.Join(pings, ",") + `]}`
	slacks := make([]string, state.MaxGroupChannels+1)
	for i := range slacks {
		slacks[i] = `{"type":"slack","config":{"webhook_url":"https://hooks.slack.com/x"}}`
	}
	bigWebhook := `{"type":"webhook","config":{"url":"https://example.com/hook","secret":"whsec_` + strings.Repeat("QUFB", state.MaxCommandBytes/4) + `"}}`
	channelsFull := func(f *fixture) func() {
		have, _ := f.srv.Store.Channels(f.noCode.ID)
		for i := len(have); i < state.MaxAccountChannels; i++ {
			f.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
				AccountId: f.noCode.ID, ChannelId: uuid.NewString(), Type: "slack", Name: "c", ConfigJson: []byte(`{"webhook_url":"https://hooks.slack.com/x"}`), IsDefault: true,
			}}})
		}
		return func() {}
	}

	// A channel and a group of main made for the cases that change or
	// delete them, and a channel that a group names.
	spareChannel, spareGroup, namedChannel := uuid.NewString(), uuid.NewString(), uuid.NewString()
	spares := func(f *fixture) func() {
		for _, cmd := range []*raftv1.Command{
			{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{AccountId: f.main.ID, ChannelId: spareChannel, Type: "pagerduty", Name: "pager",
				ConfigJson: []byte(`{"routing_key":"R0UT1NGKEY0123456789abcd"}`)}}},
			{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{AccountId: f.main.ID, ChannelId: namedChannel, Type: "email", Name: "mail",
				ConfigJson: []byte(`{"to":["ops@example.com"]}`)}}},
			{Op: &raftv1.Command_CreateNotificationGroup{CreateNotificationGroup: &raftv1.CreateNotificationGroup{AccountId: f.main.ID, GroupId: spareGroup, Name: "spare",
				ChannelsJson: []byte(`[{"channel_id":"` + namedChannel + `"},{"type":"opsgenie","config":{"api_key":"0123456789abcdef-key","region":"eu"}}]`)}}},
		} {
			f.srv.Cluster.Apply(context.Background(), cmd) // CONFLICT once made: harmless
		}
		return func() {}
	}

	return append(append(publicCases(f), auditCases(f)...), []endpointCase{
		// Ingest API: POST /ping.
		{name: "ping", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"run"}`, status: 200, contains: `"success"`},
		{name: "ping every field", method: "POST", path: "/ping", headers: bearer(ck, "Idempotency-Key", "evt-1"),
			body:   `{"event_type":"ping","monitor":"backup","status":"complete","duration":1.5,"exit_code":0,"host":"db1","project":"infra","message":"done","timestamp":1773577800,"series":"s9","event_id":"evt-1"}`,
			status: 200, contains: `"success"`},
		{name: "ping repeated event_id", method: "POST", path: "/ping", headers: bearer(ck, "Idempotency-Key", "evt-1"), body: `{"event_type":"ping","monitor":"backup","status":"complete"}`, status: 200, contains: `"success"`},
		{name: "ping creating its monitor", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"brand-new","status":"run"}`, status: 200, contains: `"created":true`},
		{name: "ping stream event", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"stream_event","monitor":"etl","state":"loading started"}`, status: 200},
		{name: "ping custom event, nulls absent", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"deploy","monitor":"etl","status":null,"host":null,"version":"1.2"}`, status: 200},
		{name: "ping bearer scheme in lower case", method: "POST", path: "/ping", headers: headers("Authorization", "bearer "+ck), body: `{"event_type":"ping","monitor":"backup","status":"skip"}`, status: 200},
		{name: "ping key in query", method: "POST", path: "/ping?api_key=" + ck, body: `{"event_type":"ping","monitor":"backup","status":"run"}`, status: 200},
		{name: "ping suspended", method: "POST", path: "/ping", headers: bearer(f.suspended.IngestKey), body: `{"event_type":"ping","monitor":"backup","status":"run"}`, status: 200, contains: `"suspended"`},
		{name: "ping missing status", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup"}`, status: 400, contains: "required field missing: status", invalidRequest: true},
		{name: "ping missing event_type", method: "POST", path: "/ping", headers: bearer(ck), body: `{"monitor":"backup","status":"run"}`, status: 400, contains: "required field missing: event_type", invalidRequest: true},
		{name: "ping invalid monitor", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"back up","status":"run"}`, status: 400, contains: "invalid field: monitor", invalidRequest: true},
		{name: "ping monitor of the wrong type", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":42,"status":"run"}`, status: 400, contains: "invalid field: monitor", invalidRequest: true},
		{name: "ping invalid status", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"deploy","monitor":"backup","status":"done"}`, status: 400, contains: "invalid field: status", invalidRequest: true},
		{name: "ping stream event without state", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"stream_event","monitor":"etl","state":""}`, status: 400, contains: "required field missing: state", invalidRequest: true},
		{name: "ping negative duration", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"run","duration":-1}`, status: 400, contains: "invalid field: duration", invalidRequest: true},
		{name: "ping fractional exit_code", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"fail","exit_code":1.5}`, status: 400, contains: "invalid field: exit_code", invalidRequest: true},
		// JSON Schema counts 1.0 as an integer; the handler refuses the
		// literal. The document says so in words.
		{name: "ping exit_code written 1.0", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"fail","exit_code":1.0}`, status: 400, contains: "invalid field: exit_code"},
		{name: "ping host too long", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"run","host":"` + strings.Repeat("h", 256) + `"}`, status: 400, contains: "invalid field: host", invalidRequest: true},
		{name: "ping project too long", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"run","project":"` + strings.Repeat("p", 101) + `"}`, status: 400, contains: "invalid field: project", invalidRequest: true},
		{name: "ping millisecond timestamp", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"run","timestamp":1773577800000000}`, status: 400, contains: "invalid field: timestamp", invalidRequest: true},
		{name: "ping series too long", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"run","series":"` + strings.Repeat("s", 65) + `"}`, status: 400, contains: "invalid field: series", invalidRequest: true},
		{name: "ping event_id and Idempotency-Key differ", method: "POST", path: "/ping", headers: bearer(ck, "Idempotency-Key", "a"), body: `{"event_type":"ping","monitor":"backup","status":"run","event_id":"b"}`, status: 400, contains: "invalid field: event_id"},
		{name: "ping invalid JSON", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":`, status: 400, contains: "invalid JSON", invalidRequest: true},
		{name: "ping JSON not an object", method: "POST", path: "/ping", headers: bearer(ck), body: `["ping"]`, status: 400, contains: "invalid JSON", invalidRequest: true},
		{name: "ping without key", method: "POST", path: "/ping", body: `{"event_type":"ping","monitor":"backup","status":"run"}`, status: 401},
		{name: "ping with management key", method: "POST", path: "/ping", headers: bearer(mk), body: `{"event_type":"ping","monitor":"backup","status":"run"}`, status: 401},
		{name: "ping malformed header beats query key", method: "POST", path: "/ping?api_key=" + ck, headers: headers("Authorization", "Basic "+ck), body: `{"event_type":"ping","monitor":"backup","status":"run"}`, status: 401},
		{name: "ping new monitor at limit", method: "POST", path: "/ping", headers: bearer(f.limited.IngestKey), body: `{"event_type":"ping","monitor":"one-too-many","status":"run"}`, status: 403, contains: "monitor_limit_reached"},
		{name: "ping too large", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"run","message":"` + huge + `"}`, status: 413},
		{name: "ping rate limited", method: "POST", path: "/ping", headers: bearer(f.throttled.IngestKey), body: `{"event_type":"ping","monitor":"backup","status":"run"}`, status: 429},
		{name: "ping new monitor beyond creations per minute", method: "POST", path: "/ping", headers: bearer(f.creations.IngestKey), body: `{"event_type":"ping","monitor":"second","status":"run"}`, status: 429, contains: "monitor_creation_rate_limited"},
		{name: "ping far-future timestamp", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"run","timestamp":32503680000}`, status: 400, contains: "invalid field: timestamp: more than 5 minutes in the future"},
		{name: "ping unknown key, leader unreachable", method: "POST", path: "/ping", headers: bearer("ck_notknownhereyet"), body: `{"event_type":"ping","monitor":"backup","status":"run"}`, status: 503, setup: failReads(noLeader)},
		{name: "ping storage failure", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"run"}`, status: 500, setup: failApply(broken)},
		{name: "ping without leader", method: "POST", path: "/ping", headers: bearer(ck), body: `{"event_type":"ping","monitor":"backup","status":"run"}`, status: 503, setup: failApply(noLeader)},

		// Ingest API: GET /ping/{monitor}.
		{name: "get ping", method: "GET", path: "/ping/backup?status=complete&duration=12.5&exit_code=0&host=db1&msg=done&series=s1&project=infra&timestamp=1773577800&event_id=get-1", headers: bearer(ck), status: 200, contains: `"success"`},
		{name: "get ping key in query", method: "GET", path: "/ping/backup?status=run&api_key=" + ck, status: 200},
		{name: "get ping stream event", method: "GET", path: "/ping/etl?event_type=stream_event&state=done", headers: bearer(ck), status: 200},
		{name: "get ping Idempotency-Key", method: "GET", path: "/ping/backup?status=run", headers: bearer(ck, "Idempotency-Key", "get-2"), status: 200},
		{name: "get ping suspended", method: "GET", path: "/ping/backup?status=run", headers: bearer(f.suspended.IngestKey), status: 200, contains: `"suspended"`},
		// Which query parameters are required depends on event_type, which
		// OpenAPI parameters cannot say: the document accepts this request.
		{name: "get ping missing status", method: "GET", path: "/ping/backup", headers: bearer(ck), status: 400, contains: "required field missing: status"},
		{name: "get ping invalid status", method: "GET", path: "/ping/backup?status=done", headers: bearer(ck), status: 400, contains: "invalid field: status", invalidRequest: true},
		{name: "get ping invalid duration", method: "GET", path: "/ping/backup?status=run&duration=-2", headers: bearer(ck), status: 400, contains: "invalid field: duration", invalidRequest: true},
		{name: "get ping invalid exit_code", method: "GET", path: "/ping/backup?status=run&exit_code=one", headers: bearer(ck), status: 400, contains: "invalid field: exit_code", invalidRequest: true},
		{name: "get ping invalid monitor", method: "GET", path: "/ping/" + strings.Repeat("m", 65) + "?status=run", headers: bearer(ck), status: 400, contains: "invalid field: monitor", invalidRequest: true},
		{name: "get ping without key", method: "GET", path: "/ping/backup?status=run", status: 401},
		{name: "get ping unknown query key", method: "GET", path: "/ping/backup?status=run&api_key=ck_unknown", status: 401},
		{name: "get ping new monitor at limit", method: "GET", path: "/ping/one-too-many?status=run", headers: bearer(f.limited.IngestKey), status: 403, contains: "monitor_limit_reached"},
		{name: "get ping rate limited", method: "GET", path: "/ping/backup?status=run", headers: bearer(f.throttled.IngestKey), status: 429},
		{name: "get ping new monitor beyond creations per minute", method: "GET", path: "/ping/third?status=run", headers: bearer(f.creations.IngestKey), status: 429, contains: "monitor_creation_rate_limited"},
		{name: "get ping unknown key, leader unreachable", method: "GET", path: "/ping/backup?status=run", headers: bearer("ck_notknownhereyet"), status: 503, setup: failReads(noLeader)},
		{name: "get ping storage failure", method: "GET", path: "/ping/backup?status=run", headers: bearer(ck), status: 500, setup: failApply(broken)},
		{name: "get ping without leader", method: "GET", path: "/ping/backup?status=run", headers: bearer(ck), status: 503, setup: failApply(noLeader)},

		// Ingest API: HEAD /ping/{monitor}.
		{name: "head ping", method: "HEAD", path: "/ping/backup?status=run", headers: bearer(ck), status: 200},
		{name: "head ping missing status", method: "HEAD", path: "/ping/backup", headers: bearer(ck), status: 400},
		{name: "head ping without key", method: "HEAD", path: "/ping/backup?status=run", status: 401},
		{name: "head ping new monitor at limit", method: "HEAD", path: "/ping/one-too-many?status=run", headers: bearer(f.limited.IngestKey), status: 403},
		{name: "head ping rate limited", method: "HEAD", path: "/ping/backup?status=run", headers: bearer(f.throttled.IngestKey), status: 429},
		{name: "head ping storage failure", method: "HEAD", path: "/ping/backup?status=run", headers: bearer(ck), status: 500, setup: failApply(broken)},
		{name: "head ping without leader", method: "HEAD", path: "/ping/backup?status=run", headers: bearer(ck), status: 503, setup: failApply(noLeader)},

		// Ingest API: GET /health.
		{name: "health", method: "GET", path: "/health", status: 200},
		{name: "health without leader", method: "GET", path: "/health", status: 503, contains: "no leader", setup: func(f *fixture) func() {
			f.health.set("no leader")
			return func() { f.health.set("") }
		}},

		// This document.
		{name: "openapi document", method: "GET", path: "/openapi.json", status: 200},

		// Operator API: POST /admin/v1/accounts.
		{name: "create account", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"new@example.com"}`, status: 201},
		{name: "create account with password and plan", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin),
			body:   `{"email":"team@example.com","password":"correct horse","plan":{"name":"team","monitor_limit":50,"monthly_event_limit":100000,"quota_grace_seconds":3600,"config_as_code":false,"ingest_rate_per_second":2.5,"ingest_burst":5}}`,
			status: 201},
		{name: "create account with null plan fields", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"nulls@example.com","password":null,"plan":{"monitor_limit":null,"name":null}}`, status: 201},
		{name: "create account not an object", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `[]`, status: 400, contains: "invalid_json", invalidRequest: true},
		// A schema cannot say "one JSON value"; kin-openapi's decoder reads
		// the first value and leaves the rest.
		{name: "create account data after object", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"a@example.com"} {}`, status: 400, contains: "invalid_json"},
		{name: "create account unknown field", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"x@example.com","nickname":"x"}`, status: 400, contains: "invalid_request", invalidRequest: true},
		{name: "create account without email", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{}`, status: 400, contains: "invalid field: email", invalidRequest: true},
		{name: "create account display-name address", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"Ops <ops@example.com>"}`, status: 400, contains: "invalid field: email", invalidRequest: true},
		{name: "create account empty password", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"y@example.com","password":""}`, status: 400, contains: "invalid field: password", invalidRequest: true},
		{name: "create account negative limit", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"z@example.com","plan":{"monitor_limit":-1}}`, status: 400, contains: "plan.monitor_limit", invalidRequest: true},
		{name: "create account plan field of the wrong type", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"z@example.com","plan":{"config_as_code":"yes"}}`, status: 400, contains: "plan.config_as_code", invalidRequest: true},
		{name: "create account without token", method: "POST", path: "/admin/v1/accounts", body: `{"email":"n@example.com"}`, status: 401},
		{name: "create account wrong token", method: "POST", path: "/admin/v1/accounts", headers: bearer("not-the-token"), body: `{"email":"n@example.com"}`, status: 401},
		{name: "create account email taken", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"OWNER@example.com"}`, status: 409},
		{name: "create account too large", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"big@example.com"}` + strings.Repeat(" ", 1<<20), status: 413},
		{name: "create account storage failure", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"s@example.com"}`, status: 500, setup: failApply(broken)},
		{name: "create account without leader", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"s@example.com"}`, status: 503, setup: failApply(noLeader)},

		// Operator API: GET /admin/v1/accounts/{id}.
		{name: "list accounts", method: "GET", path: "/admin/v1/accounts", headers: bearer(admin), status: 200, contains: `"accounts":[{"id":`},
		{name: "list accounts page", method: "GET", path: "/admin/v1/accounts?limit=1&stale=true", headers: bearer(admin), status: 200, contains: `"next_cursor":`},
		{name: "list accounts bad limit", method: "GET", path: "/admin/v1/accounts?limit=0", headers: bearer(admin), status: 400, invalidRequest: true},
		{name: "list accounts without token", method: "GET", path: "/admin/v1/accounts", status: 401},
		{name: "list accounts without leader", method: "GET", path: "/admin/v1/accounts", headers: bearer(admin), status: 503, setup: failReads(noLeader)},
		{name: "get account", method: "GET", path: acct, headers: bearer(admin), status: 200},
		{name: "get account stale", method: "GET", path: acct + "?stale=true", headers: bearer(admin), status: 200},
		{name: "get account stale not a boolean", method: "GET", path: acct + "?stale=maybe", headers: bearer(admin), status: 400, invalidRequest: true},
		{name: "get account without token", method: "GET", path: acct, status: 401},
		{name: "get account unknown", method: "GET", path: "/admin/v1/accounts/" + unknownID, headers: bearer(admin), status: 404},
		// throttled has one monitor and one event (made by its setup ping).
		{name: "get account usage", method: "GET", path: "/admin/v1/accounts/" + f.throttled.ID, headers: bearer(admin), status: 200, contains: `"usage":{"monitors":1,"events_this_period":1,`},
		{name: "get account read failure", method: "GET", path: acct, headers: bearer(admin), status: 500, setup: failReads(broken)},
		{name: "get account without leader", method: "GET", path: acct, headers: bearer(admin), status: 503, setup: failReads(noLeader)},

		// Operator API: PUT /admin/v1/accounts/{id}/plan (on other, so
		// that main keeps the default plan).
		{name: "set plan", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/plan", headers: bearer(admin), body: `{"monitor_limit":100}`, status: 200},
		{name: "set plan to defaults", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/plan", headers: bearer(admin), body: `{}`, status: 200},
		{name: "set plan invalid burst", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/plan", headers: bearer(admin), body: `{"ingest_burst":0}`, status: 400, contains: "ingest_burst", invalidRequest: true},
		{name: "set plan invalid rate", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/plan", headers: bearer(admin), body: `{"ingest_rate_per_second":0}`, status: 400, contains: "ingest_rate_per_second", invalidRequest: true},
		{name: "set plan invalid JSON", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/plan", headers: bearer(admin), body: `{`, status: 400, contains: "invalid_json", invalidRequest: true},
		{name: "set plan without token", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/plan", body: `{}`, status: 401},
		{name: "set plan unknown account", method: "PUT", path: "/admin/v1/accounts/" + unknownID + "/plan", headers: bearer(admin), body: `{}`, status: 404},
		{name: "set plan too large", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/plan", headers: bearer(admin), body: `{}` + strings.Repeat(" ", 1<<20), status: 413},
		{name: "set plan storage failure", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/plan", headers: bearer(admin), body: `{}`, status: 500, setup: failApply(broken)},
		{name: "set plan without leader", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/plan", headers: bearer(admin), body: `{}`, status: 503, setup: failApply(noLeader)},
		{name: "set password", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/password", headers: bearer(admin), body: `{"password":"another horse"}`, status: 204},
		{name: "set password short", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/password", headers: bearer(admin), body: `{"password":"short"}`, status: 400, contains: "invalid field: password", invalidRequest: true},
		{name: "set password without token", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/password", body: `{"password":"another horse"}`, status: 401},
		{name: "set password unknown account", method: "PUT", path: "/admin/v1/accounts/" + unknownID + "/password", headers: bearer(admin), body: `{"password":"another horse"}`, status: 404},
		{name: "set password too large", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/password", headers: bearer(admin), body: `{"password":"another horse"}` + strings.Repeat(" ", 1<<20), status: 413},
		{name: "set password storage failure", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/password", headers: bearer(admin), body: `{"password":""}`, status: 500, setup: failApply(broken)},
		{name: "set password without leader", method: "PUT", path: "/admin/v1/accounts/" + f.other.ID + "/password", headers: bearer(admin), body: `{"password":""}`, status: 503, setup: failApply(noLeader)},

		// Operator API: users.
		{name: "add user", method: "POST", path: users, headers: bearer(admin), body: `{"email":"dev@example.com","role":"editor","password":"a long password"}`, status: 201, contains: `"password_set":true`},
		{name: "add user without password", method: "POST", path: users, headers: bearer(admin), body: `{"email":"sso@example.com","role":"viewer","password":null}`, status: 201, contains: `"password_set":false`},
		{name: "add user unknown role", method: "POST", path: users, headers: bearer(admin), body: `{"email":"x@example.com","role":"admin"}`, status: 400, contains: "invalid field: role", invalidRequest: true},
		{name: "add user without role", method: "POST", path: users, headers: bearer(admin), body: `{"email":"x@example.com"}`, status: 400, contains: "invalid field: role", invalidRequest: true},
		{name: "add user empty password", method: "POST", path: users, headers: bearer(admin), body: `{"email":"x@example.com","role":"viewer","password":""}`, status: 400, contains: "invalid field: password", invalidRequest: true},
		{name: "create account e-mail of a user", method: "POST", path: "/admin/v1/accounts", headers: bearer(admin), body: `{"email":"viewer@example.com"}`, status: 409, contains: "user_exists"},
		{name: "add user e-mail taken", method: "POST", path: users, headers: bearer(admin), body: `{"email":"DEV@example.com","role":"viewer"}`, status: 409, contains: "user_exists"},
		{name: "add user account e-mail", method: "POST", path: users, headers: bearer(admin), body: `{"email":"` + f.main.Email + `","role":"viewer"}`, status: 409, contains: "user_exists"},
		{name: "add user without token", method: "POST", path: users, body: `{"email":"x@example.com","role":"viewer"}`, status: 401},
		{name: "add user unknown account", method: "POST", path: "/admin/v1/accounts/" + unknownID + "/users", headers: bearer(admin), body: `{"email":"x@example.com","role":"viewer"}`, status: 404},
		{name: "add user too large", method: "POST", path: users, headers: bearer(admin), body: `{"email":"x@example.com","role":"viewer"}` + strings.Repeat(" ", 1<<20), status: 413},
		{name: "add user storage failure", method: "POST", path: users, headers: bearer(admin), body: `{"email":"x@example.com","role":"viewer"}`, status: 500, setup: failApply(broken)},
		{name: "add user without leader", method: "POST", path: users, headers: bearer(admin), body: `{"email":"x@example.com","role":"viewer"}`, status: 503, setup: failApply(noLeader)},
		{name: "list users", method: "GET", path: users, headers: bearer(admin), status: 200, contains: `"role":"owner"`},
		{name: "list users stale", method: "GET", path: users + "?stale=true", headers: bearer(admin), status: 200, contains: `"role":"viewer"`},
		{name: "list users unknown account", method: "GET", path: "/admin/v1/accounts/" + unknownID + "/users", headers: bearer(admin), status: 404},
		{name: "list users without leader", method: "GET", path: users, headers: bearer(admin), status: 503, setup: failReads(noLeader)},
		{name: "get user", method: "GET", path: users + "/" + f.userID, headers: bearer(admin), status: 200, contains: `"email":"viewer@example.com"`},
		{name: "get user unknown", method: "GET", path: users + "/" + unknownID, headers: bearer(admin), status: 404},
		{name: "update user role", method: "PUT", path: users + "/" + f.userID, headers: bearer(admin), body: `{"role":"editor"}`, status: 200, contains: `"role":"editor"`},
		{name: "update user password", method: "PUT", path: users + "/" + f.userID, headers: bearer(admin), body: `{"password":"a new password"}`, status: 200, contains: `"password_set":true`},
		{name: "update user nothing", method: "PUT", path: users + "/" + f.userID, headers: bearer(admin), body: `{}`, status: 400, contains: "invalid field: role", invalidRequest: true},
		{name: "update user unknown role", method: "PUT", path: users + "/" + f.userID, headers: bearer(admin), body: `{"role":"root"}`, status: 400, contains: "invalid field: role", invalidRequest: true},
		{name: "update user last owner", method: "PUT", path: users + "/" + f.other.ID, headers: bearer(admin), body: `{"role":"viewer"}`, status: 409, contains: "last_owner"},
		{name: "update user unknown", method: "PUT", path: users + "/" + unknownID, headers: bearer(admin), body: `{"role":"viewer"}`, status: 404},
		{name: "update user storage failure", method: "PUT", path: users + "/" + f.userID, headers: bearer(admin), body: `{"role":"viewer"}`, status: 500, setup: failApply(broken)},
		{name: "update user without leader", method: "PUT", path: users + "/" + f.userID, headers: bearer(admin), body: `{"role":"viewer"}`, status: 503, setup: failApply(noLeader)},
		{name: "remove user last owner", method: "DELETE", path: users + "/" + f.other.ID, headers: bearer(admin), status: 409, contains: "last_owner"},
		{name: "remove user storage failure", method: "DELETE", path: users + "/" + f.userID, headers: bearer(admin), status: 500, setup: failApply(broken)},
		{name: "remove user without leader", method: "DELETE", path: users + "/" + f.userID, headers: bearer(admin), status: 503, setup: failApply(noLeader)},
		{name: "remove user", method: "DELETE", path: users + "/" + f.userID, headers: bearer(admin), status: 204},
		{name: "remove user again", method: "DELETE", path: users + "/" + f.userID, headers: bearer(admin), status: 404},

		// Operator API: POST /admin/v1/accounts/{id}/keys.
		{name: "create management key", method: "POST", path: acct + "/keys", headers: bearer(admin), body: `{"type":"management","name":"grafana","scopes":["delete","read"]}`, status: 201},
		{name: "create full-access management key", method: "POST", path: acct + "/keys", headers: bearer(admin), body: `{"type":"management","name":"ci","scopes":null}`, status: 201},
		{name: "create ingest key", method: "POST", path: acct + "/keys", headers: bearer(admin), body: `{"type":"ingest","name":"cron hosts","scopes":[]}`, status: 201},
		{name: "create ingest key with scopes", method: "POST", path: acct + "/keys", headers: bearer(admin), body: `{"type":"ingest","name":"x","scopes":["read"]}`, status: 400, contains: "invalid field: scopes", invalidRequest: true},
		{name: "create management key without scopes", method: "POST", path: acct + "/keys", headers: bearer(admin), body: `{"type":"management","name":"x","scopes":[]}`, status: 400, contains: "invalid field: scopes", invalidRequest: true},
		{name: "list keys", method: "GET", path: acct + "/keys", headers: bearer(admin), status: 200, contains: `"last_used_at":`},
		{name: "list keys unknown account", method: "GET", path: "/admin/v1/accounts/" + unknownID + "/keys", headers: bearer(admin), status: 404},
		{name: "create key duplicate scope", method: "POST", path: acct + "/keys", headers: bearer(admin), body: `{"type":"management","name":"x","scopes":["read","read"]}`, status: 400, contains: "scopes[1]", invalidRequest: true},
		{name: "create key unknown type", method: "POST", path: acct + "/keys", headers: bearer(admin), body: `{"type":"admin","name":"x"}`, status: 400, contains: "invalid field: type", invalidRequest: true},
		{name: "create key blank name", method: "POST", path: acct + "/keys", headers: bearer(admin), body: `{"type":"ingest","name":"   "}`, status: 400, contains: "invalid field: name", invalidRequest: true},
		{name: "create key without token", method: "POST", path: acct + "/keys", body: `{"type":"ingest","name":"x"}`, status: 401},
		{name: "create key unknown account", method: "POST", path: "/admin/v1/accounts/" + unknownID + "/keys", headers: bearer(admin), body: `{"type":"ingest","name":"x"}`, status: 404},
		{name: "create key too large", method: "POST", path: acct + "/keys", headers: bearer(admin), body: `{"type":"ingest","name":"x"}` + strings.Repeat(" ", 1<<20), status: 413},
		{name: "create key storage failure", method: "POST", path: acct + "/keys", headers: bearer(admin), body: `{"type":"ingest","name":"x"}`, status: 500, setup: failApply(broken)},
		{name: "create key without leader", method: "POST", path: acct + "/keys", headers: bearer(admin), body: `{"type":"ingest","name":"x"}`, status: 503, setup: failApply(noLeader)},

		// Operator API: DELETE /admin/v1/accounts/{id}/keys/{key_id}.
		{name: "revoke key", method: "DELETE", path: acct + "/keys/" + f.revokeKeyID, headers: bearer(admin), status: 204},
		{name: "revoke key again", method: "DELETE", path: acct + "/keys/" + f.revokeKeyID, headers: bearer(admin), status: 404},
		{name: "revoke key of another account", method: "DELETE", path: "/admin/v1/accounts/" + f.other.ID + "/keys/" + f.revokeKeyID, headers: bearer(admin), status: 404},
		{name: "revoke key without token", method: "DELETE", path: acct + "/keys/" + unknownID, status: 401},
		{name: "revoke key storage failure", method: "DELETE", path: acct + "/keys/" + unknownID, headers: bearer(admin), status: 500, setup: failApply(broken)},
		{name: "revoke key without leader", method: "DELETE", path: acct + "/keys/" + unknownID, headers: bearer(admin), status: 503, setup: failApply(noLeader)},

		// Operator API: POST /admin/v1/accounts/{id}/notification-groups.
		{name: "create group", method: "POST", path: acct + "/notification-groups", headers: bearer(admin),
			body:   `{"name":"ops","channels":[{"type":"slack","name":"ops room","config":{"webhook_url":"https://hooks.slack.com/x"}},{"type":"email","config":{"to":["ops@example.com"]}}]}`,
			status: 201},
		{name: "create group without channels", method: "POST", path: acct + "/notification-groups", headers: bearer(admin), body: `{"name":"quiet"}`, status: 201},
		{name: "create group name taken", method: "POST", path: acct + "/notification-groups", headers: bearer(admin), body: `{"name":"` + f.group + `"}`, status: 409},
		{name: "create group unknown channel type", method: "POST", path: acct + "/notification-groups", headers: bearer(admin), body: `{"name":"x","channels":[{"type":"carrier-pigeon"}]}`, status: 400, contains: "channels[0].type", invalidRequest: true},
		{name: "create group config not an object", method: "POST", path: acct + "/notification-groups", headers: bearer(admin), body: `{"name":"x","channels":[{"type":"slack","config":"https://x"}]}`, status: 400, contains: "channels[0].config", invalidRequest: true},
		{name: "create group unknown channel field", method: "POST", path: acct + "/notification-groups", headers: bearer(admin), body: `{"name":"x","channels":[{"type":"slack","url":"https://x"}]}`, status: 400, contains: "channels[0].url", invalidRequest: true},
		{name: "create group without token", method: "POST", path: acct + "/notification-groups", body: `{"name":"x"}`, status: 401},
		{name: "create group unknown account", method: "POST", path: "/admin/v1/accounts/" + unknownID + "/notification-groups", headers: bearer(admin), body: `{"name":"x"}`, status: 404},
		{name: "create group of too many channels", method: "POST", path: acct + "/notification-groups", headers: bearer(admin), body: `{"name":"x","channels":[` + strings.Join(slacks, ",") + `]}`, status: 400, contains: "invalid field: channels", invalidRequest: true},
		{name: "create group too large to store", method: "POST", path: acct + "/notification-groups", headers: bearer(admin), body: `{"name":"x","channels":[` + bigWebhook + `]}`, status: 413, contains: "too large to store"},
		{name: "create group too large", method: "POST", path: acct + "/notification-groups", headers: bearer(admin), body: `{"name":"x"}` + strings.Repeat(" ", 1<<20), status: 413},
		{name: "create group storage failure", method: "POST", path: acct + "/notification-groups", headers: bearer(admin), body: `{"name":"x"}`, status: 500, setup: failApply(broken)},
		{name: "create group without leader", method: "POST", path: acct + "/notification-groups", headers: bearer(admin), body: `{"name":"x"}`, status: 503, setup: failApply(noLeader)},

		// Operator API: POST /admin/v1/accounts/{id}/channels and .../test.
		{name: "create channel", method: "POST", path: acct + "/channels", headers: bearer(admin), body: `{"type":"webhook","name":"hook","config":{"url":"https://example.com/hook"}}`, status: 201, contains: `"secret":"whsec_`},
		{name: "create channel invalid config", method: "POST", path: acct + "/channels", headers: bearer(admin), body: `{"type":"slack","name":"x","config":{"webhook_url":"not a url"}}`, status: 400, contains: "config.webhook_url"},
		{name: "create shoutrrr channel", method: "POST", path: acct + "/channels", headers: bearer(admin), body: `{"type":"shoutrrr","name":"push","config":{"url":"ntfy://ntfy.example.com/alerts"}}`, status: 201, contains: `"type":"shoutrrr"`},
		{name: "create shoutrrr channel of an unsupported service", method: "POST", path: acct + "/channels", headers: bearer(admin), body: `{"type":"shoutrrr","name":"x","config":{"url":"matrix://u:p@matrix.example.com"}}`, status: 400, contains: "config.url"},
		{name: "create channel without token", method: "POST", path: acct + "/channels", body: `{"type":"slack","name":"x","config":{}}`, status: 401},
		{name: "create channel unknown account", method: "POST", path: "/admin/v1/accounts/" + unknownID + "/channels", headers: bearer(admin), body: `{"type":"slack","name":"x","config":{"webhook_url":"https://hooks.slack.com/x"}}`, status: 404},
		{name: "create channel too large to store", method: "POST", path: acct + "/channels", headers: bearer(admin), body: `{"name":"x",` + bigWebhook[1:], status: 413, contains: "too large to store"},
		{name: "create channel past the account's limit", method: "POST", path: "/admin/v1/accounts/" + f.noCode.ID + "/channels", headers: bearer(admin), body: `{"type":"slack","name":"x","config":{"webhook_url":"https://hooks.slack.com/x"}}`, status: 409, contains: "channel_limit_reached", setup: channelsFull},
		{name: "create channel too large", method: "POST", path: acct + "/channels", headers: bearer(admin), body: `{"type":"slack","name":"x","config":{}}` + strings.Repeat(" ", 1<<20), status: 413},
		{name: "create channel storage failure", method: "POST", path: acct + "/channels", headers: bearer(admin), body: `{"type":"slack","name":"x","config":{"webhook_url":"https://hooks.slack.com/x"}}`, status: 500, setup: failApply(broken)},
		{name: "create channel without leader", method: "POST", path: acct + "/channels", headers: bearer(admin), body: `{"type":"slack","name":"x","config":{"webhook_url":"https://hooks.slack.com/x"}}`, status: 503, setup: failApply(noLeader)},
		{name: "test channel", method: "POST", path: acct + "/channels/" + f.goodChannel + "/test", headers: bearer(admin), status: 200},
		{name: "test channel refused", method: "POST", path: acct + "/channels/" + f.badChannel + "/test", headers: bearer(admin), status: 502, contains: "delivery_failed"},
		{name: "test channel unknown", method: "POST", path: acct + "/channels/" + unknownID + "/test", headers: bearer(admin), status: 404},
		{name: "test channel without token", method: "POST", path: acct + "/channels/" + f.goodChannel + "/test", status: 401},
		{name: "test channel read failure", method: "POST", path: acct + "/channels/" + f.goodChannel + "/test", headers: bearer(admin), status: 500, setup: failReads(broken)},
		{name: "test channel without leader", method: "POST", path: acct + "/channels/" + f.goodChannel + "/test", headers: bearer(admin), status: 503, setup: failReads(noLeader)},

		// Operator API: reading, changing and deleting channels and groups.
		{name: "list channels", method: "GET", path: acct + "/channels", headers: bearer(admin), status: 200, contains: `"webhook_url":"https://hooks.slack.com/****es/x"`},
		{name: "list channels stale", method: "GET", path: acct + "/channels?stale=true", headers: bearer(admin), status: 200, setup: failReads(noLeader)},
		{name: "list channels unknown account", method: "GET", path: "/admin/v1/accounts/" + unknownID + "/channels", headers: bearer(admin), status: 404},
		{name: "list channels without token", method: "GET", path: acct + "/channels", status: 401},
		{name: "list channels without leader", method: "GET", path: acct + "/channels", headers: bearer(admin), status: 503, setup: failReads(noLeader)},
		{name: "get channel", method: "GET", path: acct + "/channels/" + spareChannel, headers: bearer(admin), status: 200, contains: `"routing_key":"****abcd"`, setup: spares},
		{name: "get channel unknown", method: "GET", path: acct + "/channels/" + unknownID, headers: bearer(admin), status: 404},
		{name: "get channel read failure", method: "GET", path: acct + "/channels/" + spareChannel, headers: bearer(admin), status: 500, setup: failReads(broken)},
		{name: "update channel keeping its secret", method: "PUT", path: acct + "/channels/" + spareChannel, headers: bearer(admin), body: `{"type":"pagerduty","name":"pager 2","config":{"routing_key":"****abcd"},"default":false}`, status: 200, contains: `"name":"pager 2"`, setup: spares},
		{name: "update channel to a webhook", method: "PUT", path: acct + "/channels/" + spareChannel, headers: bearer(admin), body: `{"type":"webhook","name":"hook","config":{"url":"https://example.com/hook"}}`, status: 200, contains: `"secret":"whsec_`, setup: spares},
		{name: "update channel invalid config", method: "PUT", path: acct + "/channels/" + spareChannel, headers: bearer(admin), body: `{"type":"slack","name":"x","config":{"webhook_url":"not a url"}}`, status: 400, contains: "config.webhook_url", setup: spares},
		{name: "update channel wrong mask", method: "PUT", path: acct + "/channels/" + spareChannel, headers: bearer(admin), body: `{"type":"webhook","name":"x","config":{"url":"https://example.com/hook","secret":"****nope"}}`, status: 400, contains: "config.secret", setup: spares},
		{name: "update channel unknown", method: "PUT", path: acct + "/channels/" + unknownID, headers: bearer(admin), body: `{"type":"slack","name":"x","config":{"webhook_url":"https://hooks.slack.com/x"}}`, status: 404},
		{name: "update channel too large to store", method: "PUT", path: acct + "/channels/" + spareChannel, headers: bearer(admin), body: `{"name":"x",` + bigWebhook[1:], status: 413, contains: "too large to store", setup: spares},
		{name: "update channel without leader", method: "PUT", path: acct + "/channels/" + spareChannel, headers: bearer(admin), body: `{"type":"slack","name":"x","config":{"webhook_url":"https://hooks.slack.com/x"}}`, status: 503, setup: failApply(noLeader)},
		{name: "channel deliveries", method: "GET", path: acct + "/channels/" + f.goodChannel + "/deliveries", headers: bearer(admin), status: 200, contains: `"deliveries":[`},
		{name: "channel deliveries unknown", method: "GET", path: acct + "/channels/" + unknownID + "/deliveries", headers: bearer(admin), status: 404},
		{name: "channel deliveries without leader", method: "GET", path: acct + "/channels/" + f.goodChannel + "/deliveries", headers: bearer(admin), status: 503, setup: failReads(noLeader)},
		{name: "delete channel named by a group", method: "DELETE", path: acct + "/channels/" + namedChannel, headers: bearer(admin), status: 409, contains: "channel_in_use", setup: spares},
		{name: "delete channel", method: "DELETE", path: acct + "/channels/" + spareChannel, headers: bearer(admin), status: 204, setup: spares},
		{name: "delete channel unknown", method: "DELETE", path: acct + "/channels/" + spareChannel, headers: bearer(admin), status: 404},
		{name: "delete channel without leader", method: "DELETE", path: acct + "/channels/" + f.goodChannel, headers: bearer(admin), status: 503, setup: failApply(noLeader)},
		{name: "list groups", method: "GET", path: acct + "/notification-groups", headers: bearer(admin), status: 200, contains: `"name":"on-call"`},
		{name: "list groups unknown account", method: "GET", path: "/admin/v1/accounts/" + unknownID + "/notification-groups", headers: bearer(admin), status: 404},
		{name: "list groups without leader", method: "GET", path: acct + "/notification-groups", headers: bearer(admin), status: 503, setup: failReads(noLeader)},
		{name: "get group", method: "GET", path: acct + "/notification-groups/" + spareGroup, headers: bearer(admin), status: 200, contains: `"api_key":"****-key"`, setup: spares},
		{name: "get group unknown", method: "GET", path: acct + "/notification-groups/" + unknownID, headers: bearer(admin), status: 404},
		{name: "update group", method: "PUT", path: acct + "/notification-groups/" + spareGroup, headers: bearer(admin), body: `{"name":"spare","channels":[{"type":"opsgenie","config":{"api_key":"****-key","region":"us"}},{"channel_id":"` + namedChannel + `"}]}`, status: 200, contains: `"region":"us"`, setup: spares},
		{name: "update group unknown channel", method: "PUT", path: acct + "/notification-groups/" + spareGroup, headers: bearer(admin), body: `{"name":"spare","channels":[{"channel_id":"` + unknownID + `"}]}`, status: 400, contains: "channels[0].channel_id", setup: spares},
		{name: "update group unknown", method: "PUT", path: acct + "/notification-groups/" + unknownID, headers: bearer(admin), body: `{"name":"x"}`, status: 404},
		{name: "update group name taken", method: "PUT", path: acct + "/notification-groups/" + spareGroup, headers: bearer(admin), body: `{"name":"` + f.group + `"}`, status: 409, contains: `"conflict"`, setup: spares},
		{name: "rename group in use", method: "PUT", path: acct + "/notification-groups/" + f.groupID, headers: bearer(admin), body: `{"name":"renamed"}`, status: 409, contains: "notification_group_in_use"},
		{name: "update group too large to store", method: "PUT", path: acct + "/notification-groups/" + spareGroup, headers: bearer(admin), body: `{"name":"x","channels":[` + bigWebhook + `]}`, status: 413, contains: "too large to store", setup: spares},
		{name: "update group without leader", method: "PUT", path: acct + "/notification-groups/" + spareGroup, headers: bearer(admin), body: `{"name":"x"}`, status: 503, setup: failApply(noLeader)},
		{name: "delete group in use", method: "DELETE", path: acct + "/notification-groups/" + f.groupID, headers: bearer(admin), status: 409, contains: "notification_group_in_use"},
		{name: "delete group", method: "DELETE", path: acct + "/notification-groups/" + spareGroup, headers: bearer(admin), status: 204, setup: spares},
		{name: "delete group unknown", method: "DELETE", path: acct + "/notification-groups/" + spareGroup, headers: bearer(admin), status: 404},
		{name: "delete group without token", method: "DELETE", path: acct + "/notification-groups/" + spareGroup, status: 401},

		// Operator API: POST /admin/v1/agent-tokens.
		{name: "create agent token", method: "POST", path: "/admin/v1/agent-tokens", headers: bearer(admin), body: `{"region":"eu-1","name":"factory"}`, status: 201},
		{name: "create agent token of an account", method: "POST", path: "/admin/v1/agent-tokens", headers: bearer(admin), body: `{"region":"eu-1","name":"tenant","accounts":["` + f.main.ID + `"]}`, status: 201},
		{name: "create agent token of no account", method: "POST", path: "/admin/v1/agent-tokens", headers: bearer(admin), body: `{"region":"eu-1","name":"tenant","accounts":[]}`, status: 400, contains: "invalid field: accounts", invalidRequest: true},
		{name: "create agent token invalid region", method: "POST", path: "/admin/v1/agent-tokens", headers: bearer(admin), body: `{"region":"EU 1","name":"factory"}`, status: 400, contains: "invalid field: region", invalidRequest: true},
		{name: "create agent token without name", method: "POST", path: "/admin/v1/agent-tokens", headers: bearer(admin), body: `{"region":"eu-1"}`, status: 400, contains: "invalid field: name", invalidRequest: true},
		{name: "create agent token without token", method: "POST", path: "/admin/v1/agent-tokens", body: `{"region":"eu-1","name":"factory"}`, status: 401},
		{name: "create agent token too large", method: "POST", path: "/admin/v1/agent-tokens", headers: bearer(admin), body: `{"region":"eu-1","name":"factory"}` + strings.Repeat(" ", 1<<20), status: 413},
		{name: "create agent token storage failure", method: "POST", path: "/admin/v1/agent-tokens", headers: bearer(admin), body: `{"region":"eu-1","name":"factory"}`, status: 500, setup: failApply(broken)},
		{name: "create agent token without leader", method: "POST", path: "/admin/v1/agent-tokens", headers: bearer(admin), body: `{"region":"eu-1","name":"factory"}`, status: 503, setup: failApply(noLeader)},

		// Operator API: GET /admin/v1/agents.
		{name: "agents", method: "GET", path: "/admin/v1/agents", headers: bearer(admin), status: 200, contains: `"buffered_events":3`, setup: func(f *fixture) func() {
			for _, c := range []*raftv1.Command{
				{Op: &raftv1.Command_RecordAgentSeen{RecordAgentSeen: &raftv1.RecordAgentSeen{AgentId: "ag-1", Region: "eu-1", Name: "edge-1", Version: "test", Connected: true, BufferedEvents: 3}}},
				{Op: &raftv1.Command_SetRegionState{SetRegionState: &raftv1.SetRegionState{Region: "eu-1", Offline: true, SinceUnixMs: 1, Done: true}}},
			} {
				f.srv.Cluster.Apply(context.Background(), c)
			}
			return func() {}
		}},
		{name: "agents without token", method: "GET", path: "/admin/v1/agents", status: 401},
		// Operator API: DELETE /admin/v1/agents/{id}.
		{name: "forget agent", method: "DELETE", path: "/admin/v1/agents/ag-gone", headers: bearer(admin), status: 204, setup: func(f *fixture) func() {
			f.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordAgentSeen{RecordAgentSeen: &raftv1.RecordAgentSeen{AgentId: "ag-gone", Region: "eu-2"}}})
			return func() {}
		}},
		{name: "forget agent unknown", method: "DELETE", path: "/admin/v1/agents/no-such-agent", headers: bearer(admin), status: 404},
		{name: "forget agent without token", method: "DELETE", path: "/admin/v1/agents/ag-gone", status: 401},
		{name: "forget agent without leader", method: "DELETE", path: "/admin/v1/agents/ag-gone", headers: bearer(admin), status: 503, setup: failApply(noLeader)},
		// Operator API: GET /admin/v1/agent-tokens.
		{name: "list agent tokens", method: "GET", path: "/admin/v1/agent-tokens", headers: bearer(admin), status: 200, contains: `"valid_from"`, setup: agentToken(uuid.NewString())},
		{name: "list agent tokens without token", method: "GET", path: "/admin/v1/agent-tokens", status: 401},
		{name: "list agent tokens without leader", method: "GET", path: "/admin/v1/agent-tokens", headers: bearer(admin), status: 503, setup: failReads(noLeader)},
		// Operator API: POST /admin/v1/agent-tokens/{id}/rotate.
		{name: "rotate agent token", method: "POST", path: "/admin/v1/agent-tokens/" + rotatedTokenID + "/rotate", headers: bearer(admin), status: 201, contains: `"replaces":"` + rotatedTokenID + `"`, setup: agentToken(rotatedTokenID)},
		{name: "rotate agent token unknown", method: "POST", path: "/admin/v1/agent-tokens/" + unknownID + "/rotate", headers: bearer(admin), status: 404},
		{name: "rotate agent token without token", method: "POST", path: "/admin/v1/agent-tokens/" + rotatedTokenID + "/rotate", status: 401},
		{name: "rotate agent token without leader", method: "POST", path: "/admin/v1/agent-tokens/" + rotatedTokenID + "/rotate", headers: bearer(admin), status: 503, setup: failReads(noLeader)},
		{name: "rotate agent token storage failure", method: "POST", path: "/admin/v1/agent-tokens/" + rotatedTokenID + "/rotate", headers: bearer(admin), status: 500, setup: failApply(broken)},
		// Operator API: DELETE /admin/v1/agent-tokens/{id}.
		{name: "revoke agent token", method: "DELETE", path: "/admin/v1/agent-tokens/" + agentTokenID, headers: bearer(admin), status: 204, setup: withAgentToken},
		{name: "revoke agent token unknown", method: "DELETE", path: "/admin/v1/agent-tokens/" + unknownID, headers: bearer(admin), status: 404},
		{name: "revoke agent token without token", method: "DELETE", path: "/admin/v1/agent-tokens/" + unknownID, status: 401},
		{name: "revoke agent token without leader", method: "DELETE", path: "/admin/v1/agent-tokens/" + unknownID, headers: bearer(admin), status: 503, setup: failApply(noLeader)},

		// Operator API: GET /admin/v1/cluster.
		{name: "cluster", method: "GET", path: "/admin/v1/cluster", headers: bearer(admin), status: 200},
		{name: "cluster without leader", method: "GET", path: "/admin/v1/cluster", headers: bearer(admin), status: 200, contains: `"leader":""`, setup: func(f *fixture) func() {
			was, _ := f.srv.Cluster.Status(context.Background())
			f.srv.Cluster.SetStatus(cluster.Status{Nodes: []cluster.ServerStatus{
				{ID: "node-1", HTTPAddr: "127.0.0.1:8080", RaftAddr: "127.0.0.1:8081", Role: "candidate", Voter: true, LastContactMs: -1, AppliedIndex: 7},
				{ID: "node-2", HTTPAddr: "127.0.0.2:8080", RaftAddr: "127.0.0.2:8081", Role: "gone", Voter: true, LastContactMs: -1},
			}})
			return func() { f.srv.Cluster.SetStatus(was) }
		}},
		{name: "cluster without token", method: "GET", path: "/admin/v1/cluster", status: 401},

		// Operator API: GET and POST /admin/v1/snapshot.
		{name: "save snapshot", method: "GET", path: "/admin/v1/snapshot", headers: bearer(admin), status: 200, contains: "LOOKOUTBACKUP"},
		{name: "save snapshot without token", method: "GET", path: "/admin/v1/snapshot", status: 401},
		{name: "save snapshot without leader", method: "GET", path: "/admin/v1/snapshot", headers: bearer(admin), status: 503, setup: failReads(noLeader)},
		{name: "restore snapshot", method: "POST", path: "/admin/v1/snapshot", headers: octet(bearer(admin)), body: backup, status: 200, contains: "applied_index"},
		{name: "restore truncated snapshot", method: "POST", path: "/admin/v1/snapshot", headers: octet(bearer(admin)), body: backup[:len(backup)/2], status: 400, contains: "invalid_snapshot"},
		{name: "restore snapshot without token", method: "POST", path: "/admin/v1/snapshot", headers: octet(nil), body: backup, status: 401},

		// Operator API: a path that is no endpoint, a method the path does
		// not have.
		{name: "admin unknown path", method: "GET", path: "/admin/v1/nothing-here", headers: bearer(admin), status: 404, unrouted: "AdminNotFound"},
		{name: "admin wrong method", method: "DELETE", path: "/admin/v1/cluster", headers: bearer(admin), status: 405, unrouted: "AdminMethodNotAllowed"},

		// Management API: GET /api/v1/monitors/{uuid}/events.
		{name: "events", method: "GET", path: events, headers: bearer(mk), status: 200, contains: `"events"`},
		{name: "events limit", method: "GET", path: events + "?limit=1", headers: bearer(mk), status: 200, contains: `"next_before":"AAAAAAAAAAE"`},
		{name: "events before", method: "GET", path: events + "?limit=1&before=AAAAAAAAAAE", headers: bearer(mk), status: 200, contains: `"status":"run"`},
		{name: "events bad before", method: "GET", path: events + "?before=AAAA", headers: bearer(mk), status: 400, contains: "invalid_request", invalidRequest: true},
		{name: "events stale", method: "GET", path: events + "?stale=true", headers: bearer(mk), status: 200},
		{name: "events with read scope", method: "GET", path: events, headers: bearer(f.readKey), status: 200},
		{name: "events limit 0", method: "GET", path: events + "?limit=0", headers: bearer(mk), status: 400, contains: "invalid_request", invalidRequest: true},
		{name: "events limit 1001", method: "GET", path: events + "?limit=1001", headers: bearer(mk), status: 400, contains: "invalid_request", invalidRequest: true},
		{name: "events limit not a number", method: "GET", path: events + "?limit=ten", headers: bearer(mk), status: 400, contains: "invalid_request", invalidRequest: true},
		{name: "events without key", method: "GET", path: events, status: 401},
		{name: "events with ingest key", method: "GET", path: events, headers: bearer(ck), status: 401},
		{name: "events unknown key", method: "GET", path: events, headers: bearer("mk_unknown"), status: 401},
		{name: "events without read scope", method: "GET", path: events, headers: bearer(f.writeKey), status: 403, contains: "insufficient_scope"},
		{name: "events unknown monitor", method: "GET", path: "/api/v1/monitors/" + unknownID + "/events", headers: bearer(mk), status: 404},
		{name: "events of another account's monitor", method: "GET", path: events, headers: bearer(f.other.ManagementKey), status: 404},
		{name: "events without leader", method: "GET", path: events, headers: bearer(mk), status: 503, setup: failReads(noLeader)},
		{name: "management unknown path", method: "GET", path: "/api/v1/nothing-here", headers: bearer(mk), status: 404, contains: `"not_found"`, unrouted: "ManagementNotFound"},
		{name: "events rate limited", method: "GET", path: events, headers: bearer(f.burstKey), status: 429, contains: "rate_limited", setup: func(f *fixture) func() {
			for range 60 {
				f.send("GET", "/api/v1/account", bearer(f.burstKey), "")
			}
			return func() {}
		}},

		// Management API: GET /api/v1/account.
		{name: "account", method: "GET", path: "/api/v1/account", headers: bearer(mk), status: 200},
		{name: "account stale", method: "GET", path: "/api/v1/account?stale=true", headers: bearer(f.readKey), status: 200},
		{name: "account usage", method: "GET", path: "/api/v1/account", headers: bearer(f.throttled.ManagementKey), status: 200, contains: `"usage":{"events_this_period":1,"monitors":1,`},
		{name: "account suspended", method: "GET", path: "/api/v1/account", headers: bearer(f.suspended.ManagementKey), status: 200, contains: `"quota_state":"suspended"`},
		{name: "account without key", method: "GET", path: "/api/v1/account", status: 401},
		{name: "account without read scope", method: "GET", path: "/api/v1/account", headers: bearer(f.writeKey), status: 403, contains: "insufficient_scope"},
		{name: "account without leader", method: "GET", path: "/api/v1/account", headers: bearer(mk), status: 503, setup: failReads(noLeader)},

		// Management API: GET /api/v1/monitors.
		{name: "list monitors", method: "GET", path: mon, headers: bearer(mk), status: 200, contains: `"uuid"`},
		{name: "list monitors with status", method: "GET", path: mon + "?include=status", headers: bearer(mk), status: 200, contains: `"status":{"state":`},
		{name: "list monitors include unknown", method: "GET", path: mon + "?include=all", headers: bearer(mk), status: 400, invalidRequest: true},
		{name: "list monitors of a kind", method: "GET", path: mon + "?kind=ssl_check", headers: bearer(f.readKey), status: 200, contains: `"ssl_check"`},
		{name: "list monitors first page", method: "GET", path: mon + "?limit=1", headers: bearer(mk), status: 200, contains: `"next_cursor"`},
		{name: "list monitors next page", method: "GET", path: mon + "?limit=2&cursor=" + f.cursor, headers: bearer(mk), status: 200},
		{name: "list monitors last page", method: "GET", path: mon + "?limit=1000", headers: bearer(mk), status: 200},
		{name: "list monitors unknown kind", method: "GET", path: mon + "?kind=cron", headers: bearer(mk), status: 400, contains: "invalid_request", invalidRequest: true},
		{name: "list monitors limit 0", method: "GET", path: mon + "?limit=0", headers: bearer(mk), status: 400, contains: "invalid_request", invalidRequest: true},
		{name: "list monitors cursor without limit", method: "GET", path: mon + "?cursor=" + f.cursor, headers: bearer(mk), status: 400, contains: "invalid_request"},
		{name: "list monitors invalid cursor", method: "GET", path: mon + "?limit=5&cursor=%21%21", headers: bearer(mk), status: 400, contains: "invalid_request"},
		{name: "list monitors without key", method: "GET", path: mon, status: 401},
		{name: "list monitors without read scope", method: "GET", path: mon, headers: bearer(f.writeKey), status: 403},
		{name: "list monitors without leader", method: "GET", path: mon, headers: bearer(mk), status: 503, setup: failReads(noLeader)},

		// Management API: GET /api/v1/monitors/export.
		{name: "export", method: "GET", path: mon + "/export", headers: bearer(mk), status: 200, contains: `"monitors"`},
		{name: "export stale", method: "GET", path: mon + "/export?stale=true", headers: bearer(f.readKey), status: 200},
		{name: "export without config as code", method: "GET", path: mon + "/export", headers: bearer(f.noCode.ManagementKey), status: 200},
		{name: "export without key", method: "GET", path: mon + "/export", status: 401},
		{name: "export without read scope", method: "GET", path: mon + "/export", headers: bearer(f.writeKey), status: 403},
		{name: "export without leader", method: "GET", path: mon + "/export", headers: bearer(mk), status: 503, setup: failReads(noLeader)},

		// Management API: GET /api/v1/monitors/{uuid}.
		{name: "get ping monitor", method: "GET", path: nightly, headers: bearer(mk), status: 200, contains: `"timeout_seconds"`},
		{name: "get ping monitor made by a ping", method: "GET", path: mon + "/" + f.monitor, headers: bearer(mk), status: 200},
		{name: "get http check", method: "GET", path: homepage, headers: bearer(mk), status: 200, contains: `"http_check"`},
		{name: "get ssl check", method: "GET", path: cert + "?stale=true", headers: bearer(f.readKey), status: 200, contains: `"ssl_check"`},
		{name: "get http check with secrets", method: "GET", path: mon + "/" + f.private, headers: bearer(mk), status: 200, contains: `"Authorization":"********"`},
		{name: "get tcp check", method: "GET", path: mon + "/" + f.port, headers: bearer(mk), status: 200, contains: `"tcp_check"`},
		{name: "get dns check", method: "GET", path: mon + "/" + f.record, headers: bearer(mk), status: 200, contains: `"dns_check"`},
		{name: "get monitor unknown", method: "GET", path: mon + "/" + unknownID, headers: bearer(mk), status: 404},
		{name: "get monitor of another account", method: "GET", path: nightly, headers: bearer(f.other.ManagementKey), status: 404},
		{name: "get monitor without key", method: "GET", path: nightly, status: 401},
		{name: "get monitor without read scope", method: "GET", path: nightly, headers: bearer(f.writeKey), status: 403},
		{name: "get monitor without leader", method: "GET", path: nightly, headers: bearer(mk), status: 503, setup: failReads(noLeader)},

		// Management API: POST /api/v1/monitors.
		{name: "create ping monitor", method: "POST", path: mon, headers: bearer(mk),
			body:   `{"manifest_version":1,"kind":"ping","name":"created-ping","enabled":false,"tags":["db","nightly"],"notification_group":"on-call","timeout_seconds":600,"expected_interval_seconds":86400,"grace_seconds":300,"display_name":"Created ping","project":"infra","uuid":"ignored"}`,
			status: 201},
		{name: "create ping monitor with nulls", method: "POST", path: mon, headers: bearer(f.writeKey), body: `{"manifest_version":1,"kind":"ping","name":"nulls","timeout_seconds":60.0,"enabled":null,"tags":null,"notification_group":null,"project":null,"display_name":null}`, status: 201},
		{name: "create http check", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"created http","schedule":"*/10 * * * *","tags":[],"config":{"url":"https://example.com/health","method":"head","timeout":5,"expected_status":204,"expected_content":""}}`, status: 201},
		{name: "create ssl check", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ssl_check","name":"created-ssl","schedule":"0 6 * * MON","regions":["eu-1"],"config":{"domain":"Example.COM:443","warning_days":30,"alert_days":7}}`, status: 201},
		{name: "create ssl check with port", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ssl_check","name":"created-ssl-port","schedule":"1d","regions":["eu-1"],"config":{"domain":"db.corp.test","port":8443}}`, status: 201},
		{name: "create http check with options", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"created-options","schedule":"1m","regions":["eu-1"],"config":{"url":"https://api.corp.test/","headers":{"x-api-key":"k","Accept":"application/json"},"basic_auth":null,"expected_status":"2XX","json_path":[{"path":"$['a b'][0]","equals":1.5},{"path":"$.ok","equals":true}],"follow_redirects":true,"tls_skip_verify":false}}`, status: 201, contains: `"X-Api-Key":"********"`},
		{name: "create http check basic auth", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"created-basic","schedule":"1m","config":{"url":"https://api.corp.test/","basic_auth":{"username":"watch","password":"pa55"},"content_absent":"error"}}`, status: 201, contains: `"password":"********"`},
		{name: "create tcp check", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"tcp_check","name":"created-tcp","schedule":"1m","config":{"host":"10.0.0.5","port":6379,"timeout":5,"send":"PING\r\n","expect":"+PONG"}}`, status: 201},
		{name: "create dns check", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"dns_check","name":"created-dns","schedule":"5m","config":{"name":"example.com.","type":"mx","expected":["10 mail.example.com"]}}`, status: 201},
		{name: "create tcp check port 0", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"tcp_check","name":"bad","schedule":"1m","config":{"host":"db","port":0}}`, status: 422, contains: "port_invalid", invalidRequest: true},
		{name: "create tcp check port 70000", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"tcp_check","name":"bad","schedule":"1m","config":{"host":"db","port":70000}}`, status: 422, contains: "port_invalid", invalidRequest: true},
		{name: "create dns check bad type", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"dns_check","name":"bad","schedule":"1m","config":{"name":"example.com","type":"SRV"}}`, status: 422, contains: "dns_type_invalid", invalidRequest: true},
		{name: "create http check header newline", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"bad","schedule":"1m","config":{"url":"https://a.test/","expected_status":200,"headers":{"X-A":"1\r\nX-B: 2"}}}`, status: 422, contains: "header_invalid", invalidRequest: true},
		{name: "create http check body too large", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"bad","schedule":"1m","config":{"url":"https://a.test/","expected_status":200,"body":"` + strings.Repeat("b", 64<<10+1) + `"}}`, status: 422, contains: "body_too_large", invalidRequest: true},
		{name: "create ssl check ca not PEM", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ssl_check","name":"bad","schedule":"1d","config":{"domain":"example.com","ca":"not a certificate"}}`, status: 422, contains: "ca_invalid", invalidRequest: true},
		{name: "create http check masked secret", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"bad","schedule":"1m","config":{"url":"https://a.test/","expected_status":200,"headers":{"Authorization":"********"}}}`, status: 422, contains: "secret_masked"},
		{name: "create timeout out of range", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"bad","timeout_seconds":0}`, status: 422, contains: "timeout_out_of_range", invalidRequest: true},
		{name: "create without manifest_version", method: "POST", path: mon, headers: bearer(mk), body: `{"kind":"ping","name":"bad","timeout_seconds":60}`, status: 422, contains: "manifest_version_unsupported", invalidRequest: true},
		{name: "create manifest_version 2", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":2,"kind":"ping","name":"bad","timeout_seconds":60}`, status: 422, contains: "manifest_version_unsupported", invalidRequest: true},
		{name: "create unknown kind", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"cron","name":"bad"}`, status: 422, contains: "kind_invalid", invalidRequest: true},
		{name: "create ping name charset", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"bad name","timeout_seconds":60}`, status: 422, contains: "name_charset_invalid", invalidRequest: true},
		{name: "create unknown field", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"bad","timeout_seconds":60,"colour":"red"}`, status: 422, contains: "field_unknown", invalidRequest: true},
		{name: "create field of another kind", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"bad","timeout_seconds":60,"regions":["eu"]}`, status: 422, contains: "field_unknown", invalidRequest: true},
		{name: "create scheduled ping", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"cron-job","timeout_seconds":600,"schedule":"30 2 * * *","timezone":"Europe/Berlin","grace_seconds":300}`, status: 201},
		{name: "create ping unknown zone", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"bad","timeout_seconds":60,"schedule":"@daily","timezone":"Mars/Olympus"}`, status: 422, contains: "timezone_invalid"},
		{name: "create ping schedule and interval", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"bad","timeout_seconds":60,"schedule":"@daily","expected_interval_seconds":3600}`, status: 422, contains: "schedule_conflict"},
		{name: "create http check without assertion", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"bad","schedule":"5m","config":{"url":"https://example.com/","expected_content":""}}`, status: 422, contains: "http_assertion_required", invalidRequest: true},
		{name: "create http check bad url", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"bad","schedule":"5m","config":{"url":"ftp://example.com/","expected_status":200}}`, status: 422, contains: "url_invalid", invalidRequest: true},
		{name: "create http check bad method", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"bad","schedule":"5m","config":{"url":"https://example.com/","method":"FETCH","expected_status":200}}`, status: 422, contains: "method_invalid", invalidRequest: true},
		{name: "create check bad schedule", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"bad","schedule":"often","config":{"url":"https://example.com/","expected_status":200}}`, status: 422, contains: "schedule_invalid", invalidRequest: true},
		// A schedule that never fires, a group the account lacks, a name
		// taken, a plan limit: the account's state, not the manifest's
		// shape, which is all a schema can say.
		{name: "create check schedule never fires", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"bad","schedule":"0 0 30 2 *","config":{"url":"https://example.com/","expected_status":200}}`, status: 422, contains: "schedule_invalid"},
		{name: "create ssl check alert after warning", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ssl_check","name":"bad","schedule":"1d","config":{"domain":"example.com","warning_days":5,"alert_days":10}}`, status: 422, contains: "days_invalid"},
		{name: "create unknown notification group", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"bad","timeout_seconds":60,"notification_group":"nobody"}`, status: 422, contains: "notification_group_invalid"},
		{name: "create name taken", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"nightly","timeout_seconds":60}`, status: 422, contains: "name_already_exists"},
		{name: "create name taken by other kind", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ssl_check","name":"homepage","schedule":"1d","config":{"domain":"example.com"}}`, status: 422, contains: "name_taken_by_other_kind"},
		{name: "create at plan limit", method: "POST", path: mon, headers: bearer(f.limited.ManagementKey), body: `{"manifest_version":1,"kind":"ping","name":"one-too-many","timeout_seconds":60}`, status: 422, contains: "plan_limit_reached"},
		{name: "create not an object", method: "POST", path: mon, headers: bearer(mk), body: `[1]`, status: 422, contains: "invalid_json", invalidRequest: true},
		{name: "create invalid JSON", method: "POST", path: mon, headers: bearer(mk), body: `{"kind":`, status: 422, contains: "invalid_json", invalidRequest: true},
		{name: "create without key", method: "POST", path: mon, body: `{"manifest_version":1,"kind":"ping","name":"x","timeout_seconds":60}`, status: 401},
		{name: "create without write scope", method: "POST", path: mon, headers: bearer(f.readKey), body: `{"manifest_version":1,"kind":"ping","name":"x","timeout_seconds":60}`, status: 403, contains: "insufficient_scope"},
		{name: "create too large", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"x","timeout_seconds":60}` + strings.Repeat(" ", 16<<20), status: 413},
		{name: "create storage failure", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"x","timeout_seconds":60}`, status: 500, setup: failApply(broken)},
		{name: "create without leader", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"x","timeout_seconds":60}`, status: 503, setup: failApply(noLeader)},

		// Management API: PUT /api/v1/monitors/{uuid}.
		{name: "replace ping monitor", method: "PUT", path: nightly, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"nightly","timeout_seconds":900,"display_name":"Nightly","project":""}`, status: 200},
		{name: "replace http check", method: "PUT", path: homepage, headers: bearer(f.writeKey), body: `{"manifest_version":1,"kind":"http_check","name":"home page","schedule":"1m","regions":["eu-1","us-2"],"config":{"url":"https://example.com/health","expected_content":"ok"}}`, status: 200},
		{name: "replace http check confirm regions", method: "PUT", path: homepage, headers: bearer(f.writeKey), body: `{"manifest_version":1,"kind":"http_check","name":"home page","schedule":"1m","regions":["eu-1","us-2"],"confirm_regions":2,"config":{"url":"https://example.com/health","expected_content":"ok"}}`, status: 200, contains: `"confirm_regions":2`},
		{name: "replace confirm regions beyond regions", method: "PUT", path: homepage, headers: bearer(f.writeKey), body: `{"manifest_version":1,"kind":"http_check","name":"home page","schedule":"1m","regions":["eu-1","us-2"],"confirm_regions":3,"config":{"url":"https://example.com/health","expected_content":"ok"}}`, status: 422, contains: "confirm_regions_invalid"},
		{name: "replace confirm regions zero", method: "PUT", path: homepage, headers: bearer(f.writeKey), body: `{"manifest_version":1,"kind":"http_check","name":"home page","schedule":"1m","regions":["eu-1"],"confirm_regions":0,"config":{"url":"https://example.com/health","expected_content":"ok"}}`, status: 422, contains: "confirm_regions_invalid", invalidRequest: true},
		{name: "replace http check with masked secrets", method: "PUT", path: mon + "/" + f.private, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"private api","schedule":"1m","regions":["eu-1"],"config":{"url":"https://api.corp.test/health","method":"POST","body":"{}","headers":{"Authorization":"********","Content-Type":"application/json"},"expected_status":["2xx",304],"content_absent":"maintenance","json_path":[{"path":"$.status","equals":"ok"}],"max_response_ms":2000,"follow_redirects":false,"tls_skip_verify":true}}`, status: 200, contains: `"Authorization":"********"`},
		{name: "replace kind mismatch", method: "PUT", path: homepage, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ssl_check","name":"home page","schedule":"1d","config":{"domain":"example.com"}}`, status: 422, contains: "kind_mismatch"},
		{name: "replace ping name", method: "PUT", path: nightly, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"nightly-2","timeout_seconds":900}`, status: 422, contains: "name_immutable"},
		{name: "replace grace out of range", method: "PUT", path: nightly, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"nightly","timeout_seconds":900,"grace_seconds":604801}`, status: 422, contains: "grace_out_of_range", invalidRequest: true},
		{name: "replace unknown", method: "PUT", path: mon + "/" + unknownID, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"x","timeout_seconds":60}`, status: 404},
		{name: "replace without key", method: "PUT", path: nightly, body: `{"manifest_version":1,"kind":"ping","name":"nightly","timeout_seconds":60}`, status: 401},
		{name: "replace without write scope", method: "PUT", path: nightly, headers: bearer(f.readKey), body: `{"manifest_version":1,"kind":"ping","name":"nightly","timeout_seconds":60}`, status: 403},
		{name: "replace too large", method: "PUT", path: nightly, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"nightly","timeout_seconds":60}` + strings.Repeat(" ", 16<<20), status: 413},
		{name: "replace storage failure", method: "PUT", path: nightly, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"nightly","timeout_seconds":60}`, status: 500, setup: failApply(broken)},
		{name: "replace without leader", method: "PUT", path: nightly, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"nightly","timeout_seconds":60}`, status: 503, setup: failReads(noLeader)},

		// Management API: POST /api/v1/monitors/apply.
		{name: "apply dry run", method: "POST", path: mon + "/apply?dry_run=true", headers: bearer(mk), body: bundle, status: 200, contains: `"dry_run":true`},
		{name: "apply", method: "POST", path: mon + "/apply", headers: bearer(f.writeKey), body: bundle, status: 200, contains: `"update"`},
		{name: "apply unchanged", method: "POST", path: mon + "/apply?dry_run=false", headers: bearer(mk), body: bundle, status: 200, contains: `"unchanged":2`},
		{name: "apply empty bundle", method: "POST", path: mon + "/apply?dry_run=true", headers: bearer(mk), body: `{"manifest_version":1,"monitors":[]}`, status: 200, contains: `"orphaned"`},
		{name: "apply duplicate entry", method: "POST", path: mon + "/apply", headers: bearer(mk), body: `{"manifest_version":1,"monitors":[{"kind":"ping","name":"a","timeout_seconds":60},{"kind":"ping","name":"a","timeout_seconds":60}]}`, status: 422, contains: "duplicate_entry"},
		{name: "apply invalid entry", method: "POST", path: mon + "/apply", headers: bearer(mk), body: `{"manifest_version":1,"monitors":[{"kind":"ping","name":"a","timeout_seconds":-1}]}`, status: 422, contains: "monitors.0", invalidRequest: true},
		{name: "apply entry not an object", method: "POST", path: mon + "/apply", headers: bearer(mk), body: `{"manifest_version":1,"monitors":[42]}`, status: 422, contains: "entry_not_object", invalidRequest: true},
		{name: "apply without monitors", method: "POST", path: mon + "/apply", headers: bearer(mk), body: `{"manifest_version":1}`, status: 422, contains: "monitors_missing", invalidRequest: true},
		{name: "apply wrong manifest_version", method: "POST", path: mon + "/apply", headers: bearer(mk), body: `{"manifest_version":"1","monitors":[]}`, status: 422, contains: "bundle_invalid", invalidRequest: true},
		{name: "apply unknown bundle key", method: "POST", path: mon + "/apply", headers: bearer(mk), body: `{"manifest_version":1,"monitors":[],"prune":true}`, status: 422, contains: "field_unknown", invalidRequest: true},
		{name: "apply invalid JSON", method: "POST", path: mon + "/apply", headers: bearer(mk), body: `{`, status: 422, contains: "invalid_json", invalidRequest: true},
		{name: "apply without config as code", method: "POST", path: mon + "/apply", headers: bearer(f.noCode.ManagementKey), body: bundle, status: 403, contains: "config_as_code_disabled"},
		{name: "apply without write scope", method: "POST", path: mon + "/apply", headers: bearer(f.readKey), body: bundle, status: 403, contains: "insufficient_scope"},
		{name: "apply without key", method: "POST", path: mon + "/apply", body: bundle, status: 401},
		{name: "apply of too many changes", method: "POST", path: mon + "/apply?dry_run=true", headers: bearer(mk), body: tooManyChanges, status: 422, contains: "bundle_too_large"},
		{name: "apply too large", method: "POST", path: mon + "/apply", headers: bearer(mk), body: bundle + strings.Repeat(" ", 16<<20), status: 413},
		{name: "apply storage failure", method: "POST", path: mon + "/apply", headers: bearer(mk), body: `{"manifest_version":1,"monitors":[{"kind":"ping","name":"fresh","timeout_seconds":60}]}`, status: 500, setup: failApply(broken)},
		{name: "apply without leader", method: "POST", path: mon + "/apply", headers: bearer(mk), body: bundle, status: 503, setup: failReads(noLeader)},
		{name: "apply overtaken on every attempt", method: "POST", path: mon + "/apply", headers: bearer(mk), body: `{"manifest_version":1,"monitors":[{"kind":"ping","name":"contended","timeout_seconds":60}]}`, status: 409, contains: "concurrent_change", setup: func(f *fixture) func() { return f.srv.Cluster.OvertakePutMonitors() }},

		// Management API: DELETE /api/v1/monitors/{uuid}.
		{name: "delete without confirm", method: "DELETE", path: doomed, headers: bearer(mk), status: 403, contains: "delete_requires_confirm"},
		{name: "delete confirm false", method: "DELETE", path: doomed + "?confirm=false", headers: bearer(mk), status: 403, contains: "delete_requires_confirm"},
		{name: "delete confirm repeated", method: "DELETE", path: doomed + "?confirm=true&confirm=false", headers: bearer(mk), status: 403, contains: "delete_requires_confirm"},
		{name: "delete without delete scope", method: "DELETE", path: doomed + "?confirm=true", headers: bearer(f.writeKey), status: 403, contains: "insufficient_scope"},
		{name: "delete without key", method: "DELETE", path: doomed + "?confirm=true", status: 401},
		{name: "delete storage failure", method: "DELETE", path: doomed + "?confirm=true", headers: bearer(mk), status: 500, setup: failApply(broken)},
		{name: "delete without leader", method: "DELETE", path: doomed + "?confirm=true", headers: bearer(mk), status: 503, setup: failApply(noLeader)},
		{name: "delete", method: "DELETE", path: doomed + "?confirm=true", headers: bearer(mk), status: 204},
		{name: "delete again", method: "DELETE", path: doomed + "?confirm=true", headers: bearer(mk), status: 404},
		{name: "delete monitor of another account", method: "DELETE", path: nightly + "?confirm=true", headers: bearer(f.other.ManagementKey), status: 404},

		// Management API: failure_threshold and remind_every_seconds.
		{name: "create check with threshold and reminders", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"http_check","name":"flaky","schedule":"5m","failure_threshold":3,"remind_every_seconds":3600,"config":{"url":"https://example.com/","expected_status":200}}`, status: 201, contains: `"failure_threshold":3`},
		{name: "create ping with a short reminder", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"nagging","timeout_seconds":60,"remind_every_seconds":60}`, status: 422, contains: "remind_every_out_of_range", invalidRequest: true},

		{name: "create ping depending on a check", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"app","timeout_seconds":60,"depends_on":[{"kind":"ping","name":"backup"}]}`, status: 201, contains: `"depends_on":[{"kind":"ping","name":"backup"}]`},
		{name: "create ping depending on nothing known", method: "POST", path: mon, headers: bearer(mk), body: `{"manifest_version":1,"kind":"ping","name":"orphan","timeout_seconds":60,"depends_on":[{"kind":"ping","name":"no-such"}]}`, status: 422, contains: "dependency_invalid"},
		{name: "apply a dependency cycle", method: "POST", path: mon + "/apply?dry_run=true", headers: bearer(mk), body: `{"manifest_version":1,"monitors":[{"kind":"ping","name":"a","timeout_seconds":60,"depends_on":[{"kind":"ping","name":"b"}]},{"kind":"ping","name":"b","timeout_seconds":60,"depends_on":[{"kind":"ping","name":"a"}]}]}`, status: 422, contains: "dependency_cycle"},

		// Management API: POST /api/v1/monitors/{uuid}/pause and /resume.
		{name: "pause", method: "POST", path: cert + "/pause", headers: bearer(f.writeKey), body: `{"until":"` + f.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `","reason":"renewing"}`, status: 200, contains: `"pause_reason":"renewing"`},
		{name: "pause without a body", method: "POST", path: nightly + "/pause", headers: bearer(mk), status: 200, contains: `"paused_until":null`},
		{name: "resume", method: "POST", path: nightly + "/resume", headers: bearer(mk), status: 200, contains: `"status"`},
		{name: "resume a check", method: "POST", path: cert + "/resume", headers: bearer(mk), status: 200, contains: `"status"`},
		{name: "pause until in the past", method: "POST", path: nightly + "/pause", headers: bearer(mk), body: `{"until":"2001-01-01T00:00:00Z"}`, status: 422, contains: "until_invalid"},
		{name: "pause unknown field", method: "POST", path: nightly + "/pause", headers: bearer(mk), body: `{"for":"2h"}`, status: 422, contains: "field_unknown", invalidRequest: true},
		{name: "pause unknown monitor", method: "POST", path: mon + "/" + unknownID + "/pause", headers: bearer(mk), status: 404},
		{name: "resume unknown monitor", method: "POST", path: mon + "/" + unknownID + "/resume", headers: bearer(mk), status: 404},
		{name: "pause without write scope", method: "POST", path: nightly + "/pause", headers: bearer(f.readKey), status: 403},
		{name: "resume without key", method: "POST", path: nightly + "/resume", status: 401},
		{name: "pause too large", method: "POST", path: nightly + "/pause", headers: bearer(mk), body: `{}` + strings.Repeat(" ", 16<<20), status: 413},
		{name: "pause storage failure", method: "POST", path: nightly + "/pause", headers: bearer(mk), status: 500, setup: failApply(broken)},
		{name: "resume without leader", method: "POST", path: nightly + "/resume", headers: bearer(mk), status: 503, setup: failReads(noLeader)},

		// Management API: /api/v1/maintenance-windows.
		{name: "windows", method: "GET", path: mw, headers: bearer(f.readKey), status: 200, contains: `"maintenance_windows"`},
		{name: "create one-off window", method: "POST", path: mw, headers: bearer(f.writeKey), body: `{"name":"move","starts_at":"` + f.clock.Now().UTC().Format(time.RFC3339) + `","ends_at":"` + f.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `","match":{"monitors":["` + f.nightly + `"]}}`, status: 201, contains: `"active":true`},
		{name: "create recurring window", method: "POST", path: mw, headers: bearer(mk), body: windowBody, status: 201, contains: `"next_starts_at"`},
		{name: "create window ending before it starts", method: "POST", path: mw, headers: bearer(mk), body: `{"name":"x","starts_at":"2030-01-02T00:00:00Z","ends_at":"2030-01-01T00:00:00Z"}`, status: 422, contains: "window_times_invalid"},
		{name: "create window with a short duration", method: "POST", path: mw, headers: bearer(mk), body: `{"name":"x","schedule":"1d","duration_seconds":10}`, status: 422, contains: "duration_out_of_range", invalidRequest: true},
		{name: "create window with an unknown field", method: "POST", path: mw, headers: bearer(mk), body: `{"name":"x","schedule":"1d","duration_seconds":60,"every":"day"}`, status: 422, contains: "field_unknown", invalidRequest: true},
		{name: "create window without write scope", method: "POST", path: mw, headers: bearer(f.readKey), body: windowBody, status: 403},
		{name: "create window without key", method: "POST", path: mw, body: windowBody, status: 401},
		{name: "create window too large", method: "POST", path: mw, headers: bearer(mk), body: windowBody + strings.Repeat(" ", 16<<20), status: 413},
		{name: "create window storage failure", method: "POST", path: mw, headers: bearer(mk), body: windowBody, status: 500, setup: failApply(broken)},
		{name: "window", method: "GET", path: window, headers: bearer(mk), status: 200, contains: `"patching"`},
		{name: "window of another account", method: "GET", path: window, headers: bearer(f.other.ManagementKey), status: 404},
		{name: "windows without leader", method: "GET", path: mw, headers: bearer(mk), status: 503, setup: failReads(noLeader)},
		{name: "replace window", method: "PUT", path: window, headers: bearer(mk), body: `{"name":"patching","schedule":"0 3 * * 2","duration_seconds":3600}`, status: 200, contains: `"0 3 * * 2"`},
		{name: "replace unknown window", method: "PUT", path: mw + "/" + unknownID, headers: bearer(mk), body: windowBody, status: 404},
		{name: "replace window invalid", method: "PUT", path: window, headers: bearer(mk), body: `{"name":"x"}`, status: 422, contains: "window_times_invalid"},
		{name: "delete window without delete scope", method: "DELETE", path: doomedWindow, headers: bearer(f.writeKey), status: 403},
		{name: "delete window", method: "DELETE", path: doomedWindow, headers: bearer(mk), status: 204},
		{name: "delete window again", method: "DELETE", path: doomedWindow, headers: bearer(mk), status: 404},
		{name: "nightly in maintenance", method: "GET", path: nightly, headers: bearer(mk), status: 200, contains: `"maintenance":{"id"`},

		// Management API: GET /api/v1/monitors/{uuid}/executions.
		{name: "executions", method: "GET", path: executions, headers: bearer(mk), status: 200, contains: `"executions"`},
		{name: "ssl check executions", method: "GET", path: cert + "/executions", headers: bearer(mk), status: 200, contains: `"days_left":90`},
		{name: "tcp check executions", method: "GET", path: mon + "/" + f.port + "/executions", headers: bearer(mk), status: 200, contains: `"connect_ms":3`},
		{name: "dns check executions", method: "GET", path: mon + "/" + f.record + "/executions", headers: bearer(mk), status: 200, contains: `"rtt_ms":8`},
		{name: "ssl check status", method: "GET", path: cert, headers: bearer(mk), status: 200, contains: `"last_status":"running"`},
		{name: "executions limit", method: "GET", path: executions + "?limit=10", headers: bearer(f.readKey), status: 200},
		{name: "executions page", method: "GET", path: cert + "/executions?limit=1", headers: bearer(mk), status: 200, contains: `"next_before":"` + certBefore + `"`},
		{name: "executions before", method: "GET", path: cert + "/executions?limit=1&before=" + certBefore, headers: bearer(mk), status: 200, contains: `"status":"success"`},
		{name: "executions bad before", method: "GET", path: executions + "?before=AAAA", headers: bearer(mk), status: 400, contains: "invalid_request", invalidRequest: true},
		{name: "executions limit 0", method: "GET", path: executions + "?limit=0", headers: bearer(mk), status: 400, contains: "invalid_request", invalidRequest: true},
		{name: "executions unknown monitor", method: "GET", path: mon + "/" + unknownID + "/executions", headers: bearer(mk), status: 404},
		{name: "executions without key", method: "GET", path: executions, status: 401},
		{name: "executions without read scope", method: "GET", path: executions, headers: bearer(f.writeKey), status: 403},
		{name: "executions without leader", method: "GET", path: executions, headers: bearer(mk), status: 503, setup: failReads(noLeader)},

		// Operator API: wrong tokens throttled per address (the right one
		// still passes). Last, since it throttles the table's own address;
		// afterwards the clock moves on until the bucket is full.
		{name: "cluster after too many wrong tokens", method: "GET", path: "/admin/v1/cluster", headers: bearer("not-the-token"), status: 429, contains: "rate_limited", setup: func(f *fixture) func() {
			for range 20 {
				if f.send("GET", "/admin/v1/cluster", bearer("not-the-token"), "").status == 429 {
					break
				}
			}
			return func() { f.clock.advance(time.Minute) }
		}},
	}...)
}

// backupOf is a backup file of the fixture's state as it is now (restoring
// it changes nothing the other cases see).
func backupOf(f *fixture) string {
	snap, err := f.srv.Store.Snapshot()
	if err != nil {
		f.t.Fatal(err)
	}
	defer snap.Release()
	var b strings.Builder
	if _, err := state.WriteBackup(&b, snap); err != nil {
		f.t.Fatal(err)
	}
	return b.String()
}

// octet adds Content-Type: application/octet-stream to h.
func octet(h http.Header) http.Header {
	if h == nil {
		h = http.Header{}
	}
	h = h.Clone()
	h.Set("Content-Type", "application/octet-stream")
	return h
}
