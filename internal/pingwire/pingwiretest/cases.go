// Package pingwiretest holds the Ingest API's validation cases as data,
// so that every server of the API (the control plane's and the edge
// agent's) is tested against the same table and gives the same answers.
package pingwiretest

import (
	"net/url"
	"strings"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/names"
)

// Case is one request and the answer it must get.
type Case struct {
	// Name names the case.
	Name string
	// Body is the JSON body of a POST /ping (PostCases).
	Body string
	// Path is the path and query of a GET (GetCases).
	Path string
	// Idem is the Idempotency-Key header, "" for none.
	Idem string
	// Err is the message of the 400 answer, "" when the event is accepted.
	Err string
	// Want is the accepted event without its account, key and receipt
	// time; nil when only acceptance is checked.
	Want *raftv1.Event
}

// s repeats "a" n times.
func s(n int) string { return strings.Repeat("a", n) }

// ping is a valid POST body with extra appended inside the object.
func ping(extra string) string {
	return `{"event_type":"ping","monitor":"backup","status":"run"` + extra + `}`
}

// PostCases are the cases of POST /ping.
func PostCases() []Case {
	return []Case{
		// The body.
		{Name: "syntax error", Body: `{"event_type":`, Err: "invalid JSON"},
		{Name: "not JSON", Body: `event_type=ping`, Err: "invalid JSON"},
		{Name: "empty body", Body: ``, Err: "invalid JSON"},
		{Name: "array", Body: `[{"event_type":"ping"}]`, Err: "invalid JSON"},
		{Name: "string", Body: `"ping"`, Err: "invalid JSON"},
		{Name: "number", Body: `42`, Err: "invalid JSON"},
		{Name: "null", Body: `null`, Err: "invalid JSON"},
		{Name: "data after the object", Body: ping("") + `{}`, Err: "invalid JSON"},
		{Name: "unknown fields ignored", Body: ping(`,"agent":{"v":[1,2]},"monitor_id":7`)},
		// event_type
		{Name: "event_type missing", Body: `{"monitor":"backup","status":"run"}`, Err: "required field missing: event_type"},
		{Name: "event_type empty", Body: `{"event_type":"","monitor":"backup","status":"run"}`, Err: "required field missing: event_type"},
		{Name: "event_type null", Body: `{"event_type":null,"monitor":"backup","status":"run"}`, Err: "required field missing: event_type"},
		{Name: "event_type number", Body: `{"event_type":1,"monitor":"backup"}`, Err: "invalid field: event_type"},
		{Name: "event_type 64", Body: `{"event_type":"` + s(64) + `","monitor":"backup"}`},
		{Name: "event_type 65", Body: `{"event_type":"` + s(65) + `","monitor":"backup"}`, Err: "invalid field: event_type"},
		{Name: "custom event without status", Body: `{"event_type":"deploy","monitor":"backup"}`,
			Want: &raftv1.Event{EventType: "deploy", Monitor: "backup"}},
		// monitor
		{Name: "monitor missing", Body: `{"event_type":"ping","status":"run"}`, Err: "required field missing: monitor"},
		{Name: "monitor empty", Body: `{"event_type":"ping","monitor":"","status":"run"}`, Err: "required field missing: monitor"},
		{Name: "monitor number", Body: `{"event_type":"ping","monitor":7,"status":"run"}`, Err: "invalid field: monitor"},
		{Name: "monitor space", Body: `{"event_type":"ping","monitor":"my job","status":"run"}`, Err: "invalid field: monitor"},
		{Name: "monitor dot", Body: `{"event_type":"ping","monitor":"a.b","status":"run"}`, Err: "invalid field: monitor"},
		{Name: "monitor slash", Body: `{"event_type":"ping","monitor":"a/b","status":"run"}`, Err: "invalid field: monitor"},
		{Name: "monitor non-ASCII", Body: `{"event_type":"ping","monitor":"café","status":"run"}`, Err: "invalid field: monitor"},
		{Name: "monitor 64", Body: `{"event_type":"ping","monitor":"` + s(62) + `-_","status":"run"}`},
		{Name: "monitor 65", Body: `{"event_type":"ping","monitor":"` + s(65) + `","status":"run"}`, Err: "invalid field: monitor"},
		// status
		{Name: "status missing for ping", Body: `{"event_type":"ping","monitor":"backup"}`, Err: "required field missing: status"},
		{Name: "status empty for ping", Body: `{"event_type":"ping","monitor":"backup","status":""}`, Err: "required field missing: status"},
		{Name: "status unknown", Body: `{"event_type":"ping","monitor":"backup","status":"done"}`, Err: "invalid field: status"},
		{Name: "status upper case", Body: `{"event_type":"ping","monitor":"backup","status":"RUN"}`, Err: "invalid field: status"},
		{Name: "status number", Body: `{"event_type":"ping","monitor":"backup","status":1}`, Err: "invalid field: status"},
		{Name: "status unknown on custom event", Body: `{"event_type":"deploy","monitor":"backup","status":"done"}`, Err: "invalid field: status"},
		{Name: "status complete", Body: `{"event_type":"ping","monitor":"backup","status":"complete"}`},
		{Name: "status fail", Body: `{"event_type":"ping","monitor":"backup","status":"fail"}`},
		{Name: "status skip", Body: `{"event_type":"ping","monitor":"backup","status":"skip"}`},
		// state
		{Name: "stream_event without state", Body: `{"event_type":"stream_event","monitor":"backup"}`, Err: "required field missing: state"},
		{Name: "stream_event empty state", Body: `{"event_type":"stream_event","monitor":"backup","state":""}`, Err: "required field missing: state"},
		{Name: "state number", Body: `{"event_type":"stream_event","monitor":"backup","state":3}`, Err: "invalid field: state"},
		{Name: "stream_event", Body: `{"event_type":"stream_event","monitor":"backup","state":"Deploy running"}`,
			Want: &raftv1.Event{EventType: "stream_event", Monitor: "backup", State: "Deploy running"}},
		// duration
		{Name: "duration string", Body: ping(`,"duration":"1.5"`), Err: "invalid field: duration"},
		{Name: "duration negative", Body: ping(`,"duration":-0.5`), Err: "invalid field: duration"},
		{Name: "duration overflow", Body: ping(`,"duration":1e400`), Err: "invalid field: duration"},
		{Name: "duration bool", Body: ping(`,"duration":true`), Err: "invalid field: duration"},
		{Name: "duration zero", Body: ping(`,"duration":0`)},
		{Name: "duration fraction", Body: ping(`,"duration":12.25`),
			Want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run", Duration: proto.Float64(12.25)}},
		// exit_code
		{Name: "exit_code fractional", Body: ping(`,"exit_code":1.5`), Err: "invalid field: exit_code"},
		{Name: "exit_code with fraction part", Body: ping(`,"exit_code":1.0`), Err: "invalid field: exit_code"},
		{Name: "exit_code exponent", Body: ping(`,"exit_code":1e2`), Err: "invalid field: exit_code"},
		{Name: "exit_code string", Body: ping(`,"exit_code":"1"`), Err: "invalid field: exit_code"},
		{Name: "exit_code over int64", Body: ping(`,"exit_code":9223372036854775808`), Err: "invalid field: exit_code"},
		{Name: "exit_code max int64", Body: ping(`,"exit_code":9223372036854775807`)},
		{Name: "exit_code negative", Body: ping(`,"exit_code":-1`),
			Want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run", ExitCode: proto.Int64(-1)}},
		// host, project
		{Name: "host 255", Body: ping(`,"host":"` + s(255) + `"`)},
		{Name: "host 256", Body: ping(`,"host":"` + s(256) + `"`), Err: "invalid field: host"},
		{Name: "host counts characters", Body: ping(`,"host":"` + strings.Repeat("é", 255) + `"`)},
		{Name: "host number", Body: ping(`,"host":5`), Err: "invalid field: host"},
		{Name: "project 100", Body: ping(`,"project":"` + s(100) + `"`)},
		{Name: "project 101", Body: ping(`,"project":"` + s(101) + `"`), Err: "invalid field: project"},
		{Name: "project array", Body: ping(`,"project":["a"]`), Err: "invalid field: project"},
		{Name: "project with ESC", Body: ping(`,"project":"ops\u001b[2J"`), Err: "invalid field: project: " + names.ErrControl.Error()},
		{Name: "project with an RTL override", Body: ping(`,"project":"ops\u202e"`), Err: "invalid field: project: " + names.ErrBidi.Error()},
		{Name: "project of zero-width characters", Body: ping(`,"project":"\u200b\u2060"`), Err: "invalid field: project: " + names.ErrBlank.Error()},
		{Name: "project in any script", Body: ping(`,"project":"équipe チーム"`)},
		{Name: "project empty is absent", Body: ping(`,"project":""`),
			Want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run"}},
		// message
		{Name: "message number", Body: ping(`,"message":5`), Err: "invalid field: message"},
		{Name: "message object", Body: ping(`,"message":{}`), Err: "invalid field: message"},
		// timestamp
		{Name: "timestamp string", Body: ping(`,"timestamp":"1700000000"`), Err: "invalid field: timestamp"},
		{Name: "timestamp zero", Body: ping(`,"timestamp":0`), Err: "invalid field: timestamp"},
		{Name: "timestamp negative", Body: ping(`,"timestamp":-1`), Err: "invalid field: timestamp"},
		{Name: "timestamp fractional", Body: ping(`,"timestamp":1700000000.5`), Err: "invalid field: timestamp"},
		{Name: "timestamp after 9999", Body: ping(`,"timestamp":253402300800`), Err: "invalid field: timestamp"},
		{Name: "timestamp", Body: ping(`,"timestamp":1700000000`),
			Want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run", Timestamp: proto.Int64(1700000000)}},
		// series
		{Name: "series 64", Body: ping(`,"series":"` + s(64) + `"`)},
		{Name: "series 65", Body: ping(`,"series":"` + s(65) + `"`), Err: "invalid field: series"},
		{Name: "series number", Body: ping(`,"series":1`), Err: "invalid field: series"},
		// event_id and Idempotency-Key
		{Name: "event_id 128", Body: ping(`,"event_id":"` + s(128) + `"`)},
		{Name: "event_id 129", Body: ping(`,"event_id":"` + s(129) + `"`), Err: "invalid field: event_id"},
		{Name: "event_id number", Body: ping(`,"event_id":12`), Err: "invalid field: event_id"},
		{Name: "Idempotency-Key", Body: ping(""), Idem: "k-1",
			Want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run", EventId: "k-1"}},
		{Name: "Idempotency-Key equal to event_id", Body: ping(`,"event_id":"k-1"`), Idem: "k-1"},
		{Name: "Idempotency-Key conflict", Body: ping(`,"event_id":"k-1"`), Idem: "k-2", Err: "invalid field: event_id"},
		{Name: "Idempotency-Key 129", Body: ping(""), Idem: s(129), Err: "invalid field: event_id"},
		// Everything at once.
		{Name: "all fields", Body: `{"event_type":"ping","monitor":"db-backup_1","status":"fail","state":"x","duration":3.5,` +
			`"exit_code":2,"host":"web-1","project":"infra","message":"disk full","timestamp":1700000000,"series":"r-9","event_id":"e-1"}`,
			Want: &raftv1.Event{EventType: "ping", Monitor: "db-backup_1", Status: "fail", State: "x", Duration: proto.Float64(3.5),
				ExitCode: proto.Int64(2), Host: "web-1", Project: "infra", Message: "disk full", Timestamp: proto.Int64(1700000000),
				Series: "r-9", EventId: "e-1"}},
	}
}

// GetCases are the cases of GET /ping/{monitor}.
func GetCases() []Case {
	return []Case{
		{Name: "status only", Path: "/ping/backup?status=run",
			Want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run"}},
		{Name: "no monitor", Path: "/ping/?status=run", Err: "required field missing: monitor"},
		{Name: "monitor dot", Path: "/ping/a.b?status=run", Err: "invalid field: monitor"},
		{Name: "monitor space", Path: "/ping/a%20b?status=run", Err: "invalid field: monitor"},
		{Name: "monitor escaped slash", Path: "/ping/a%2Fb?status=run", Err: "invalid field: monitor"},
		{Name: "monitor 64", Path: "/ping/" + s(64) + "?status=run"},
		{Name: "monitor 65", Path: "/ping/" + s(65) + "?status=run", Err: "invalid field: monitor"},
		{Name: "monitor parameter ignored", Path: "/ping/backup?status=run&monitor=other",
			Want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run"}},
		{Name: "status missing", Path: "/ping/backup", Err: "required field missing: status"},
		{Name: "status empty", Path: "/ping/backup?status=", Err: "required field missing: status"},
		{Name: "status unknown", Path: "/ping/backup?status=ok", Err: "invalid field: status"},
		{Name: "event_type 65", Path: "/ping/backup?event_type=" + s(65), Err: "invalid field: event_type"},
		{Name: "custom event_type", Path: "/ping/backup?event_type=deploy",
			Want: &raftv1.Event{EventType: "deploy", Monitor: "backup"}},
		{Name: "stream_event without state", Path: "/ping/backup?event_type=stream_event", Err: "required field missing: state"},
		{Name: "stream_event", Path: "/ping/backup?event_type=stream_event&state=failed+hard",
			Want: &raftv1.Event{EventType: "stream_event", Monitor: "backup", State: "failed hard"}},
		{Name: "duration not a number", Path: "/ping/backup?status=run&duration=abc", Err: "invalid field: duration"},
		{Name: "duration negative", Path: "/ping/backup?status=run&duration=-1", Err: "invalid field: duration"},
		{Name: "duration NaN", Path: "/ping/backup?status=run&duration=NaN", Err: "invalid field: duration"},
		{Name: "duration Inf", Path: "/ping/backup?status=run&duration=Inf", Err: "invalid field: duration"},
		{Name: "duration overflow", Path: "/ping/backup?status=run&duration=1e400", Err: "invalid field: duration"},
		{Name: "duration hex", Path: "/ping/backup?status=run&duration=0x10", Err: "invalid field: duration"},
		{Name: "duration plus sign", Path: "/ping/backup?status=run&duration=%2B1", Err: "invalid field: duration"},
		{Name: "duration space", Path: "/ping/backup?status=run&duration=1+", Err: "invalid field: duration"},
		{Name: "exit_code fractional", Path: "/ping/backup?status=fail&exit_code=1.5", Err: "invalid field: exit_code"},
		{Name: "exit_code word", Path: "/ping/backup?status=fail&exit_code=one", Err: "invalid field: exit_code"},
		{Name: "exit_code over int64", Path: "/ping/backup?status=fail&exit_code=9223372036854775808", Err: "invalid field: exit_code"},
		{Name: "timestamp word", Path: "/ping/backup?status=run&timestamp=now", Err: "invalid field: timestamp"},
		{Name: "timestamp zero", Path: "/ping/backup?status=run&timestamp=0", Err: "invalid field: timestamp"},
		{Name: "host 256", Path: "/ping/backup?status=run&host=" + s(256), Err: "invalid field: host"},
		{Name: "project 101", Path: "/ping/backup?status=run&project=" + s(101), Err: "invalid field: project"},
		{Name: "project 100", Path: "/ping/backup?status=run&project=" + s(100)},
		{Name: "project with ESC", Path: "/ping/backup?status=run&project=ops%1B", Err: "invalid field: project: " + names.ErrControl.Error()},
		{Name: "project with an RTL isolate", Path: "/ping/backup?status=run&project=%E2%81%A7ops", Err: "invalid field: project: " + names.ErrBidi.Error()},
		{Name: "series 65", Path: "/ping/backup?status=run&series=" + s(65), Err: "invalid field: series"},
		{Name: "event_id 129", Path: "/ping/backup?status=run&event_id=" + s(129), Err: "invalid field: event_id"},
		{Name: "Idempotency-Key conflict", Path: "/ping/backup?status=run&event_id=a", Idem: "b", Err: "invalid field: event_id"},
		{Name: "unknown parameters ignored", Path: "/ping/backup?status=run&foo=bar&message=ignored"},
		{Name: "all parameters", Path: "/ping/backup?status=complete&duration=2.5&exit_code=0&host=h1&msg=" +
			url.QueryEscape("all good") + "&series=s1&project=p1&timestamp=1700000000&event_id=e1",
			Want: &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "complete", Duration: proto.Float64(2.5),
				ExitCode: proto.Int64(0), Host: "h1", Message: "all good", Series: "s1", Project: "p1",
				Timestamp: proto.Int64(1700000000), EventId: "e1"}},
	}
}
