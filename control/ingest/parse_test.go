package ingest

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// s repeats "a" n times.
func s(n int) string { return strings.Repeat("a", n) }

func TestPostValidation(t *testing.T) {
	cl := &cannedCluster{}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount(bigBurst)
	ping := func(extra string) string {
		return `{"event_type":"ping","monitor":"backup","status":"run"` + extra + `}`
	}
	for _, tc := range []struct {
		name, body string
		idem       string // Idempotency-Key header
		err        string // "" for a 200
		want       *raftv1.Event
	}{
		// The body.
		{name: "syntax error", body: `{"event_type":`, err: "invalid JSON"},
		{name: "not JSON", body: `event_type=ping`, err: "invalid JSON"},
		{name: "empty body", body: ``, err: "invalid JSON"},
		{name: "array", body: `[{"event_type":"ping"}]`, err: "invalid JSON"},
		{name: "string", body: `"ping"`, err: "invalid JSON"},
		{name: "number", body: `42`, err: "invalid JSON"},
		{name: "null", body: `null`, err: "invalid JSON"},
		{name: "data after the object", body: ping("") + `{}`, err: "invalid JSON"},
		{name: "unknown fields ignored", body: ping(`,"agent":{"v":[1,2]},"monitor_id":7`)},
		// event_type
		{name: "event_type missing", body: `{"monitor":"backup","status":"run"}`, err: "required field missing: event_type"},
		{name: "event_type empty", body: `{"event_type":"","monitor":"backup","status":"run"}`, err: "required field missing: event_type"},
		{name: "event_type null", body: `{"event_type":null,"monitor":"backup","status":"run"}`, err: "required field missing: event_type"},
		{name: "event_type number", body: `{"event_type":1,"monitor":"backup"}`, err: "invalid field: event_type"},
		{name: "event_type 64", body: `{"event_type":"` + s(64) + `","monitor":"backup"}`},
		{name: "event_type 65", body: `{"event_type":"` + s(65) + `","monitor":"backup"}`, err: "invalid field: event_type"},
		{name: "custom event without status", body: `{"event_type":"deploy","monitor":"backup"}`,
			want: &raftv1.Event{EventType: "deploy", Monitor: "backup"}},
		// monitor
		{name: "monitor missing", body: `{"event_type":"ping","status":"run"}`, err: "required field missing: monitor"},
		{name: "monitor empty", body: `{"event_type":"ping","monitor":"","status":"run"}`, err: "required field missing: monitor"},
		{name: "monitor number", body: `{"event_type":"ping","monitor":7,"status":"run"}`, err: "invalid field: monitor"},
		{name: "monitor space", body: `{"event_type":"ping","monitor":"my job","status":"run"}`, err: "invalid field: monitor"},
		{name: "monitor dot", body: `{"event_type":"ping","monitor":"a.b","status":"run"}`, err: "invalid field: monitor"},
		{name: "monitor slash", body: `{"event_type":"ping","monitor":"a/b","status":"run"}`, err: "invalid field: monitor"},
		{name: "monitor non-ASCII", body: `{"event_type":"ping","monitor":"café","status":"run"}`, err: "invalid field: monitor"},
		{name: "monitor 64", body: `{"event_type":"ping","monitor":"` + s(62) + `-_","status":"run"}`},
		{name: "monitor 65", body: `{"event_type":"ping","monitor":"` + s(65) + `","status":"run"}`, err: "invalid field: monitor"},
		// status
		{name: "status missing for ping", body: `{"event_type":"ping","monitor":"backup"}`, err: "required field missing: status"},
		{name: "status empty for ping", body: `{"event_type":"ping","monitor":"backup","status":""}`, err: "required field missing: status"},
		{name: "status unknown", body: `{"event_type":"ping","monitor":"backup","status":"done"}`, err: "invalid field: status"},
		{name: "status upper case", body: `{"event_type":"ping","monitor":"backup","status":"RUN"}`, err: "invalid field: status"},
		{name: "status number", body: `{"event_type":"ping","monitor":"backup","status":1}`, err: "invalid field: status"},
		{name: "status unknown on custom event", body: `{"event_type":"deploy","monitor":"backup","status":"done"}`, err: "invalid field: status"},
		{name: "status complete", body: `{"event_type":"ping","monitor":"backup","status":"complete"}`},
		{name: "status fail", body: `{"event_type":"ping","monitor":"backup","status":"fail"}`},
		{name: "status skip", body: `{"event_type":"ping","monitor":"backup","status":"skip"}`},
		// state
		{name: "stream_event without state", body: `{"event_type":"stream_event","monitor":"backup"}`, err: "required field missing: state"},
		{name: "stream_event empty state", body: `{"event_type":"stream_event","monitor":"backup","state":""}`, err: "required field missing: state"},
		{name: "state number", body: `{"event_type":"stream_event","monitor":"backup","state":3}`, err: "invalid field: state"},
		{name: "stream_event", body: `{"event_type":"stream_event","monitor":"backup","state":"Deploy running"}`,
			want: &raftv1.Event{EventType: "stream_event", Monitor: "backup", State: "Deploy running"}},
		// duration
		{name: "duration string", body: ping(`,"duration":"1.5"`), err: "invalid field: duration"},
		{name: "duration negative", body: ping(`,"duration":-0.5`), err: "invalid field: duration"},
		{name: "duration overflow", body: ping(`,"duration":1e400`), err: "invalid field: duration"},
		{name: "duration bool", body: ping(`,"duration":true`), err: "invalid field: duration"},
		{name: "duration zero", body: ping(`,"duration":0`)},
		{name: "duration fraction", body: ping(`,"duration":12.25`),
			want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run", Duration: proto.Float64(12.25)}},
		// exit_code
		{name: "exit_code fractional", body: ping(`,"exit_code":1.5`), err: "invalid field: exit_code"},
		{name: "exit_code with fraction part", body: ping(`,"exit_code":1.0`), err: "invalid field: exit_code"},
		{name: "exit_code exponent", body: ping(`,"exit_code":1e2`), err: "invalid field: exit_code"},
		{name: "exit_code string", body: ping(`,"exit_code":"1"`), err: "invalid field: exit_code"},
		{name: "exit_code over int64", body: ping(`,"exit_code":9223372036854775808`), err: "invalid field: exit_code"},
		{name: "exit_code max int64", body: ping(`,"exit_code":9223372036854775807`)},
		{name: "exit_code negative", body: ping(`,"exit_code":-1`),
			want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run", ExitCode: proto.Int64(-1)}},
		// host, project
		{name: "host 255", body: ping(`,"host":"` + s(255) + `"`)},
		{name: "host 256", body: ping(`,"host":"` + s(256) + `"`), err: "invalid field: host"},
		{name: "host counts characters", body: ping(`,"host":"` + strings.Repeat("é", 255) + `"`)},
		{name: "host number", body: ping(`,"host":5`), err: "invalid field: host"},
		{name: "project 100", body: ping(`,"project":"` + s(100) + `"`)},
		{name: "project 101", body: ping(`,"project":"` + s(101) + `"`), err: "invalid field: project"},
		{name: "project array", body: ping(`,"project":["a"]`), err: "invalid field: project"},
		{name: "project empty is absent", body: ping(`,"project":""`),
			want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run"}},
		// message
		{name: "message number", body: ping(`,"message":5`), err: "invalid field: message"},
		{name: "message object", body: ping(`,"message":{}`), err: "invalid field: message"},
		// timestamp
		{name: "timestamp string", body: ping(`,"timestamp":"1700000000"`), err: "invalid field: timestamp"},
		{name: "timestamp zero", body: ping(`,"timestamp":0`), err: "invalid field: timestamp"},
		{name: "timestamp negative", body: ping(`,"timestamp":-1`), err: "invalid field: timestamp"},
		{name: "timestamp fractional", body: ping(`,"timestamp":1700000000.5`), err: "invalid field: timestamp"},
		{name: "timestamp after 9999", body: ping(`,"timestamp":253402300800`), err: "invalid field: timestamp"},
		{name: "timestamp", body: ping(`,"timestamp":1700000000`),
			want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run", Timestamp: proto.Int64(1700000000)}},
		// series
		{name: "series 64", body: ping(`,"series":"` + s(64) + `"`)},
		{name: "series 65", body: ping(`,"series":"` + s(65) + `"`), err: "invalid field: series"},
		{name: "series number", body: ping(`,"series":1`), err: "invalid field: series"},
		// event_id and Idempotency-Key
		{name: "event_id 128", body: ping(`,"event_id":"` + s(128) + `"`)},
		{name: "event_id 129", body: ping(`,"event_id":"` + s(129) + `"`), err: "invalid field: event_id"},
		{name: "event_id number", body: ping(`,"event_id":12`), err: "invalid field: event_id"},
		{name: "Idempotency-Key", body: ping(""), idem: "k-1",
			want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run", EventId: "k-1"}},
		{name: "Idempotency-Key equal to event_id", body: ping(`,"event_id":"k-1"`), idem: "k-1"},
		{name: "Idempotency-Key conflict", body: ping(`,"event_id":"k-1"`), idem: "k-2", err: "invalid field: event_id"},
		{name: "Idempotency-Key 129", body: ping(""), idem: s(129), err: "invalid field: event_id"},
		// Everything at once.
		{name: "all fields", body: `{"event_type":"ping","monitor":"db-backup_1","status":"fail","state":"x","duration":3.5,` +
			`"exit_code":2,"host":"web-1","project":"infra","message":"disk full","timestamp":1700000000,"series":"r-9","event_id":"e-1"}`,
			want: &raftv1.Event{EventType: "ping", Monitor: "db-backup_1", Status: "fail", State: "x", Duration: proto.Float64(3.5),
				ExitCode: proto.Int64(2), Host: "web-1", Project: "infra", Message: "disk full", Timestamp: proto.Int64(1700000000),
				Series: "r-9", EventId: "e-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.idem != "" {
				hdr = []string{"Idempotency-Key", tc.idem}
			}
			before := len(cl.events())
			r := e.post(acct.IngestKey, tc.body, hdr...)
			if tc.err != "" {
				r.wantError(t, 400, tc.err)
				if len(cl.events()) != before {
					t.Fatal("a refused event was applied")
				}
				if r.header.Get("X-Quota-State") == "" {
					t.Error("no quota headers on a 400")
				}
				return
			}
			r.want(t, 200, success)
			checkLastEvent(t, cl, acct.ID, tc.want)
		})
	}
}

// checkLastEvent checks the last applied event against want (its account
// and receipt time aside); want nil checks only that one was applied.
func checkLastEvent(t *testing.T, cl *cannedCluster, accountID string, want *raftv1.Event) {
	t.Helper()
	evs := cl.events()
	if len(evs) == 0 {
		t.Fatal("no event applied")
	}
	got := proto.CloneOf(evs[len(evs)-1])
	if got.AccountId != accountID || got.ReceivedUnixMs == 0 || got.KeyId == "" {
		t.Errorf("account %q received %d key %q", got.AccountId, got.ReceivedUnixMs, got.KeyId)
	}
	if want == nil {
		return
	}
	got.AccountId, got.ReceivedUnixMs, got.KeyId = "", 0, ""
	if !proto.Equal(got, want) {
		t.Errorf("event\n%v\nwant\n%v", got, want)
	}
}

func TestGetValidation(t *testing.T) {
	cl := &cannedCluster{}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount(bigBurst)
	for _, tc := range []struct {
		name, path string
		idem       string
		err        string
		want       *raftv1.Event
	}{
		{name: "status only", path: "/ping/backup?status=run",
			want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run"}},
		{name: "no monitor", path: "/ping/?status=run", err: "required field missing: monitor"},
		{name: "monitor dot", path: "/ping/a.b?status=run", err: "invalid field: monitor"},
		{name: "monitor space", path: "/ping/a%20b?status=run", err: "invalid field: monitor"},
		{name: "monitor escaped slash", path: "/ping/a%2Fb?status=run", err: "invalid field: monitor"},
		{name: "monitor 64", path: "/ping/" + s(64) + "?status=run"},
		{name: "monitor 65", path: "/ping/" + s(65) + "?status=run", err: "invalid field: monitor"},
		{name: "monitor parameter ignored", path: "/ping/backup?status=run&monitor=other",
			want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run"}},
		{name: "status missing", path: "/ping/backup", err: "required field missing: status"},
		{name: "status empty", path: "/ping/backup?status=", err: "required field missing: status"},
		{name: "status unknown", path: "/ping/backup?status=ok", err: "invalid field: status"},
		{name: "event_type 65", path: "/ping/backup?event_type=" + s(65), err: "invalid field: event_type"},
		{name: "custom event_type", path: "/ping/backup?event_type=deploy",
			want: &raftv1.Event{EventType: "deploy", Monitor: "backup"}},
		{name: "stream_event without state", path: "/ping/backup?event_type=stream_event", err: "required field missing: state"},
		{name: "stream_event", path: "/ping/backup?event_type=stream_event&state=failed+hard",
			want: &raftv1.Event{EventType: "stream_event", Monitor: "backup", State: "failed hard"}},
		{name: "duration not a number", path: "/ping/backup?status=run&duration=abc", err: "invalid field: duration"},
		{name: "duration negative", path: "/ping/backup?status=run&duration=-1", err: "invalid field: duration"},
		{name: "duration NaN", path: "/ping/backup?status=run&duration=NaN", err: "invalid field: duration"},
		{name: "duration Inf", path: "/ping/backup?status=run&duration=Inf", err: "invalid field: duration"},
		{name: "duration overflow", path: "/ping/backup?status=run&duration=1e400", err: "invalid field: duration"},
		{name: "duration hex", path: "/ping/backup?status=run&duration=0x10", err: "invalid field: duration"},
		{name: "duration plus sign", path: "/ping/backup?status=run&duration=%2B1", err: "invalid field: duration"},
		{name: "duration space", path: "/ping/backup?status=run&duration=1+", err: "invalid field: duration"},
		{name: "exit_code fractional", path: "/ping/backup?status=fail&exit_code=1.5", err: "invalid field: exit_code"},
		{name: "exit_code word", path: "/ping/backup?status=fail&exit_code=one", err: "invalid field: exit_code"},
		{name: "exit_code over int64", path: "/ping/backup?status=fail&exit_code=9223372036854775808", err: "invalid field: exit_code"},
		{name: "timestamp word", path: "/ping/backup?status=run&timestamp=now", err: "invalid field: timestamp"},
		{name: "timestamp zero", path: "/ping/backup?status=run&timestamp=0", err: "invalid field: timestamp"},
		{name: "host 256", path: "/ping/backup?status=run&host=" + s(256), err: "invalid field: host"},
		{name: "project 101", path: "/ping/backup?status=run&project=" + s(101), err: "invalid field: project"},
		{name: "project 100", path: "/ping/backup?status=run&project=" + s(100)},
		{name: "series 65", path: "/ping/backup?status=run&series=" + s(65), err: "invalid field: series"},
		{name: "event_id 129", path: "/ping/backup?status=run&event_id=" + s(129), err: "invalid field: event_id"},
		{name: "Idempotency-Key conflict", path: "/ping/backup?status=run&event_id=a", idem: "b", err: "invalid field: event_id"},
		{name: "unknown parameters ignored", path: "/ping/backup?status=run&foo=bar&message=ignored"},
		{name: "all parameters", path: "/ping/backup?status=complete&duration=2.5&exit_code=0&host=h1&msg=" +
			url.QueryEscape("all good") + "&series=s1&project=p1&timestamp=1700000000&event_id=e1",
			want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "complete", Duration: proto.Float64(2.5),
				ExitCode: proto.Int64(0), Host: "h1", Message: "all good", Series: "s1", Project: "p1",
				Timestamp: proto.Int64(1700000000), EventId: "e1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.idem != "" {
				hdr = []string{"Idempotency-Key", tc.idem}
			}
			r := e.get(acct.IngestKey, tc.path, hdr...)
			if tc.err != "" {
				r.wantError(t, 400, tc.err)
				return
			}
			r.want(t, 200, success)
			checkLastEvent(t, cl, acct.ID, tc.want)
		})
	}
}

func TestMessageCut(t *testing.T) {
	cl := &cannedCluster{}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount("")
	// "a" then two-byte characters: byte 65536 falls inside one.
	msg := "a" + strings.Repeat("é", 40000)
	e.post(acct.IngestKey, `{"event_type":"ping","monitor":"m","status":"run","message":"`+msg+`"}`).want(t, 200, success)
	got := cl.events()[0].GetMessage()
	if len(got) != 65535 || !utf8.ValidString(got) || !strings.HasPrefix(msg, got) {
		t.Fatalf("message of %d bytes (valid %v), want the first 65535 bytes", len(got), utf8.ValidString(got))
	}
	// At the limit nothing is cut; GET's msg is cut alike.
	exact := s(65536)
	e.post(acct.IngestKey, `{"event_type":"ping","monitor":"m","status":"run","message":"`+exact+`"}`).want(t, 200, success)
	if got := cl.events()[1].GetMessage(); got != exact {
		t.Fatalf("message of %d bytes, want 65536", len(got))
	}
	e.get(acct.IngestKey, "/ping/m?status=run&msg="+s(70000)).want(t, 200, success)
	if got := cl.events()[2].GetMessage(); got != exact {
		t.Fatalf("GET message of %d bytes, want 65536", len(got))
	}
}

func TestBodyTooLarge(t *testing.T) {
	cl := &cannedCluster{}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount("")
	body := `{"event_type":"ping","monitor":"m","status":"run","message":"` + s(1<<20) + `"}`
	e.post(acct.IngestKey, body).wantError(t, 413, "request too large")
	if n := len(cl.events()); n != 0 {
		t.Fatalf("%d events applied", n)
	}
}

func TestCutUTF8(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 3, "abc"}, {"abc", 2, "ab"}, {"aé", 2, "a"}, {"aé", 3, "aé"}, {"€", 2, ""}, {"", 0, ""},
	} {
		if got := cutUTF8(tc.in, tc.max); got != tc.want {
			t.Errorf("cutUTF8(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
