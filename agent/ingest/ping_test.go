package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"lookout/agent/buffer"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingwire/pingwiretest"
)

// checkBuffered checks the last buffered event against want (nil: only
// that one was buffered), and that the agent stamped it.
func checkBuffered(t *testing.T, e *env, before int, want *raftv1.Event) {
	t.Helper()
	evs := e.events()
	if len(evs) != before+1 {
		t.Fatalf("%d events buffered, want %d", len(evs), before+1)
	}
	got := proto.CloneOf(evs[len(evs)-1])
	if got.AccountId != "acct-1" || got.KeyId != "key-1" || got.ReceivedUnixMs != e.now().UnixMilli() || got.EventId == "" {
		t.Fatalf("stamps: account %q key %q received %d event_id %q", got.AccountId, got.KeyId, got.ReceivedUnixMs, got.EventId)
	}
	if want == nil {
		return
	}
	got.AccountId, got.KeyId, got.ReceivedUnixMs = "", "", 0
	if want.EventId == "" {
		if _, err := uuid.Parse(got.EventId); err != nil {
			t.Fatalf("event_id %q given by the agent is no uuid", got.EventId)
		}
		got.EventId = ""
	}
	if !proto.Equal(got, want) {
		t.Fatalf("buffered\n%v\nwant\n%v", got, want)
	}
}

// TestPostValidation runs the Ingest API's shared validation table (the
// one the control plane is tested with) through the agent's POST /ping.
func TestPostValidation(t *testing.T) {
	e := newEnv(t, envOptions{quotas: quotas{"acct-1": {State: "ok", Used: 3}}})
	key := e.addKey("key-1", "acct-1", bigBurst)
	for _, tc := range pingwiretest.PostCases() {
		t.Run(tc.Name, func(t *testing.T) {
			var hdr []string
			if tc.Idem != "" {
				hdr = []string{"Idempotency-Key", tc.Idem}
			}
			before := len(e.events())
			r := e.post(key, tc.Body, hdr...)
			if tc.Err != "" {
				r.wantError(t, 400, tc.Err)
				if len(e.events()) != before {
					t.Fatal("a refused event was buffered")
				}
				if r.header.Get("X-Quota-State") != "ok" {
					t.Error("no quota headers on a 400")
				}
				return
			}
			r.want(t, 200, success)
			checkBuffered(t, e, before, tc.Want)
		})
	}
}

// TestGetValidation runs the shared table through GET /ping/{monitor}.
func TestGetValidation(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.addKey("key-1", "acct-1", bigBurst)
	for _, tc := range pingwiretest.GetCases() {
		t.Run(tc.Name, func(t *testing.T) {
			var hdr []string
			if tc.Idem != "" {
				hdr = []string{"Idempotency-Key", tc.Idem}
			}
			before := len(e.events())
			r := e.get(key, tc.Path, hdr...)
			if tc.Err != "" {
				r.wantError(t, 400, tc.Err)
				return
			}
			r.want(t, 200, success)
			checkBuffered(t, e, before, tc.Want)
		})
	}
}

func TestHeadPing(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.addKey("key-1", "acct-1", bigBurst)
	if r := e.do("HEAD", "/ping/backup?status=run", key, ""); r.status != 200 {
		t.Fatalf("HEAD: %d", r.status)
	}
	checkBuffered(t, e, 0, &raftv1.Event{EventType: "ping", Monitor: "backup", Status: "run"})
}

func TestEventIDs(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.addKey("key-1", "acct-1", bigBurst)
	e.post(key, pingBody).want(t, 200, success)
	e.post(key, pingBody).want(t, 200, success)
	e.post(key, `{"event_type":"ping","monitor":"backup","status":"run","event_id":"mine"}`).want(t, 200, success)
	e.get(key, "/ping/backup?status=run", "Idempotency-Key", "idem-1").want(t, 200, success)
	evs := e.events()
	if _, err := uuid.Parse(evs[0].EventId); err != nil || evs[0].EventId == evs[1].EventId {
		t.Fatalf("given ids %q %q: want two distinct uuids", evs[0].EventId, evs[1].EventId)
	}
	if evs[2].EventId != "mine" || evs[3].EventId != "idem-1" {
		t.Fatalf("sent ids became %q %q", evs[2].EventId, evs[3].EventId)
	}
}

func TestUnauthorized(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.addKey("key-1", "acct-1", bigBurst)
	mk := "mk_" + strings.TrimPrefix(key, "ck_") // same secret, wrong kind
	for _, tc := range []struct {
		name string
		do   func() response
	}{
		{"no key", func() response { return e.post("", pingBody) }},
		{"unknown key", func() response { return e.post("ck_unknown", pingBody) }},
		{"management key", func() response { return e.post(mk, pingBody) }},
		{"malformed header", func() response {
			return e.do("POST", "/ping?api_key="+key, "", pingBody, "Authorization", "Basic abc")
		}},
		{"GET unknown api_key", func() response { return e.get("", "/ping/backup?status=run&api_key=ck_nope") }},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.do().wantError(t, 401, "unauthorized") })
	}
	// The api_key parameter works on GET and POST.
	e.get("", "/ping/backup?status=run&api_key="+key).want(t, 200, success)
	e.do("POST", "/ping?api_key="+key, "", pingBody).want(t, 200, success)
	if n := len(e.events()); n != 2 {
		t.Fatalf("%d events buffered, want 2", n)
	}
	if got := e.counter("unauthorized"); got != 5 {
		t.Fatalf("unauthorized counted %v times, want 5", got)
	}
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t, envOptions{quotas: quotas{"acct-1": {State: "warning", Used: 80}}})
	slow := e.addKey("key-1", "acct-1", &raftv1.Plan{IngestRatePerSecond: 0.5, IngestBurst: 2})
	other := e.addKey("key-2", "acct-1", &raftv1.Plan{IngestRatePerSecond: 0.5, IngestBurst: 2})
	e.post(slow, pingBody).want(t, 200, success)
	e.get(slow, "/ping/backup?status=run").want(t, 200, success)
	r := e.post(slow, pingBody)
	r.wantError(t, 429, "rate_limited")
	if r.header.Get("Retry-After") != "2" || r.header.Get("X-Quota-State") != "warning" {
		t.Fatalf("429 headers: %v", r.header)
	}
	e.post(other, pingBody).want(t, 200, success) // its own bucket
	e.advance(2 * time.Second)
	e.post(slow, pingBody).want(t, 200, success)
	if got := e.counter("rate_limited"); got != 1 {
		t.Fatalf("rate_limited counted %v", got)
	}
	// The default plan: 10/s, burst 20.
	def := e.addKey("key-3", "acct-1", nil)
	for i := range 20 {
		if r := e.post(def, pingBody); r.status != 200 {
			t.Fatalf("ping %d: %d", i, r.status)
		}
	}
	e.post(def, pingBody).wantError(t, 429, "rate_limited")
}

func TestTimestampBounds(t *testing.T) {
	e := newEnv(t, envOptions{retention: 24 * time.Hour})
	key := e.addKey("key-1", "acct-1", bigBurst)
	now := e.now().Unix()
	at := func(ts int64) string {
		return fmt.Sprintf(`{"event_type":"ping","monitor":"backup","status":"run","timestamp":%d}`, ts)
	}
	e.post(key, at(now+301)).wantError(t, 400, "invalid field: timestamp: more than 5 minutes in the future")
	e.post(key, at(now-25*3600)).wantError(t, 400, "invalid field: timestamp: older than the event retention age (24h0m0s)")
	e.post(key, at(now+299)).want(t, 200, success)
	e.post(key, at(now-23*3600)).want(t, 200, success)
}

func TestBodyTooLarge(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.addKey("key-1", "acct-1", bigBurst)
	body := `{"event_type":"ping","monitor":"m","status":"run","message":"` + strings.Repeat("a", 1<<20) + `"}`
	e.post(key, body).wantError(t, 413, "request too large")
	if n := len(e.events()); n != 0 {
		t.Fatalf("%d events buffered", n)
	}
}

func TestQuotaHeaders(t *testing.T) {
	resets := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	e := newEnv(t, envOptions{quotas: quotas{"acct-1": {State: "exceeded", Used: 1200, Limit: proto.Int64(1000), ResetsAtUnixMs: resets.UnixMilli()}}})
	key := e.addKey("key-1", "acct-1", bigBurst)
	none := e.addKey("key-2", "acct-2", bigBurst)
	r := e.post(key, pingBody)
	r.want(t, 200, success)
	for h, want := range map[string]string{
		"X-Quota-State": "exceeded", "X-Quota-Used": "1200", "X-Quota-Limit": "1000",
		"X-Quota-Reset": "2026-04-01T00:00:00Z", "X-Quota-Reset-In": fmt.Sprint(int64(resets.Sub(e.now()).Seconds())),
	} {
		if got := r.header.Get(h); got != want {
			t.Errorf("%s %q, want %q", h, got, want)
		}
	}
	// An account the agent has no quota for yet gets none.
	if r := e.post(none, pingBody); r.status != 200 || r.header.Get("X-Quota-State") != "" {
		t.Fatalf("%d with X-Quota-State %q", r.status, r.header.Get("X-Quota-State"))
	}
}

// TestBufferFull: pings are refused with 503 buffer_full once buffered
// pings fill the buffer, counted by the buffer and the metric; acking
// makes room.
func TestBufferFull(t *testing.T) {
	e := newEnv(t, envOptions{maxBytes: 4 << 10})
	key := e.addKey("key-1", "acct-1", bigBurst)
	body := `{"event_type":"ping","monitor":"backup","status":"run","message":"` + strings.Repeat("m", 500) + `"}`
	accepted := 0
	for ; accepted < 100; accepted++ {
		r := e.post(key, body)
		if r.status == 503 {
			r.wantError(t, 503, "buffer_full")
			if r.header.Get("Retry-After") == "" {
				t.Fatal("no Retry-After on buffer_full")
			}
			break
		}
		r.want(t, 200, success)
	}
	if accepted == 0 || accepted == 100 {
		t.Fatalf("%d pings accepted before the buffer was full", accepted)
	}
	if n := len(e.events()); n != accepted {
		t.Fatalf("%d buffered, %d answered 200", n, accepted)
	}
	if s := e.buf.Stats(); s.RefusedFull != 1 || e.counter("buffer_full") != 1 || e.counter("buffered") != float64(accepted) {
		t.Fatalf("stats %+v, metric buffer_full %v buffered %v", s, e.counter("buffer_full"), e.counter("buffered"))
	}
	got, _ := e.buf.Events(1, 0)
	if err := e.buf.AckEvents(got[0].Seq); err != nil {
		t.Fatal(err)
	}
	e.post(key, body).want(t, 200, success)
}

// blockingSink holds every append until released.
type blockingSink struct {
	started chan *raftv1.Event
	release chan error
}

func (s *blockingSink) AppendEvent(ev *raftv1.Event) error {
	s.started <- ev
	return <-s.release
}

// TestAnswerAfterAppend: the answer is written only once the append has
// returned, and an append error is never answered 200.
func TestAnswerAfterAppend(t *testing.T) {
	sink := &blockingSink{started: make(chan *raftv1.Event), release: make(chan error)}
	e := newEnv(t, envOptions{sink: sink})
	key := e.addKey("key-1", "acct-1", bigBurst)
	for _, tc := range []struct {
		err    error
		status int
		body   string
	}{
		{nil, 200, success},
		{fmt.Errorf("append: %w", buffer.ErrFull), 503, `{"error":"buffer_full"}`},
		{buffer.ErrClosed, 503, `{"error":"unavailable"}`},
		{errors.New("disk on fire"), 500, `{"error":"internal error"}`},
	} {
		answered := make(chan response, 1)
		go func() { answered <- e.post(key, pingBody) }()
		<-sink.started
		select {
		case r := <-answered:
			t.Fatalf("answered %d before the append returned", r.status)
		case <-time.After(100 * time.Millisecond):
		}
		sink.release <- tc.err
		(<-answered).want(t, tc.status, tc.body)
	}
}

func TestHealth(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.addKey("key-1", "acct-1", bigBurst)
	e.post(key, pingBody).want(t, 200, success)
	r := e.get("", "/health")
	if r.status != 200 {
		t.Fatalf("health %d", r.status)
	}
	s := e.buf.Stats()
	want := fmt.Sprintf(`{"status":"ok","link":{"connected":false,"control":"http://cp:8080","region":"eu"},"gossip":{"state":"waiting_for_key","members":1},`+
		`"buffer":{"events":1,"results":0,"bytes":%d,"max_bytes":%d,"oldest_unix_ms":%d,"dropped_results":0,"refused_events":0}}`,
		s.Bytes, s.MaxBytes, e.now().UnixMilli())
	r.want(t, 200, want)
}

func TestOtherRoutes(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := e.addKey("key-1", "acct-1", bigBurst)
	r := e.do("GET", "/ping", key, "")
	r.wantError(t, 405, "method not allowed")
	if r.header.Get("Allow") != http.MethodPost {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
	r = e.do("POST", "/ping/backup", key, pingBody)
	r.wantError(t, 405, "method not allowed")
	if r.header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
	e.do("GET", "/ping/a/b", key, "").wantError(t, 404, "not found")
	e.get(key, "/ping/?status=run").wantError(t, 400, "required field missing: monitor")
}

// TestBufferUnavailable: the buffer's directory removed (and a file put
// at its path, so that it cannot recover yet), the next ping is answered
// 503 buffer_unavailable, never 200, and /health answers 503 with the
// reason.
func TestBufferUnavailable(t *testing.T) {
	e := newEnv(t, envOptions{checkEvery: time.Hour})
	key := e.addKey("key-1", "acct-1", bigBurst)
	e.post(key, pingBody).want(t, 200, success)
	if err := os.RemoveAll(e.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(e.dir) }) // before the buffer's Close
	r := e.post(key, pingBody)
	r.wantError(t, 503, "buffer_unavailable")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	e.get(key, "/ping/backup?status=run").wantError(t, 503, "buffer_unavailable")
	h := e.get("", "/health")
	var body struct{ Status, Error string }
	if err := json.Unmarshal([]byte(h.body), &body); err != nil || h.status != 503 || body.Status != "unavailable" ||
		!strings.Contains(body.Error, e.dir) || !strings.Contains(body.Error, "removed") {
		t.Fatalf("health %d %s", h.status, h.body)
	}
	if n := e.counter("buffer_unavailable"); n != 2 {
		t.Fatalf("buffer_unavailable counted %v", n)
	}
}
