package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"lookout/internal/client"
)

// answerWith returns a server answering every request with status, header
// and body, and the last request it saw with its body.
func answerWith(t *testing.T, status int, header map[string]string, body string) (*httptest.Server, *http.Request, *[]byte) {
	t.Helper()
	var got http.Request
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotBody, _ = io.ReadAll(r.Body)
		got = *r.Clone(context.Background())
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &got, &gotBody
}

func TestIngestPing(t *testing.T) {
	srv, req, body := answerWith(t, 200, map[string]string{
		"X-Quota-State": "warning", "X-Quota-Limit": "1000", "X-Quota-Used": "812",
		"X-Quota-Reset": "2026-04-01T00:00:00Z", "X-Quota-Reset-In": "3600",
	}, `{"status":"success"}`)
	c := client.NewIngest(srv.URL+"/", "ck_test", nil)
	res, err := c.Ping(context.Background(), client.Event{
		EventType: "ping", Monitor: "backup-db", Status: "fail", Duration: ptr(1.5), ExitCode: ptr(0),
		Host: "web-1", Project: "infra", Message: "boom", Timestamp: ptr(int64(1700000000)), Series: "s1", EventID: "e1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if req.Method != http.MethodPost || req.URL.Path != "/ping" || req.Header.Get("Authorization") != "Bearer ck_test" ||
		req.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request %s %s, headers %v", req.Method, req.URL.Path, req.Header)
	}
	var sent map[string]any
	if err := json.Unmarshal(*body, &sent); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"event_type": "ping", "monitor": "backup-db", "status": "fail", "duration": 1.5, "exit_code": 0.0,
		"host": "web-1", "project": "infra", "message": "boom", "timestamp": 1.7e9, "series": "s1", "event_id": "e1",
	}
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("sent %v\nwant %v", sent, want)
	}
	wantRes := client.PingResult{Status: "success", Quota: client.Quota{
		State: "warning", Limit: ptr(int64(1000)), Used: ptr(int64(812)), Reset: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC),
	}}
	if !reflect.DeepEqual(*res, wantRes) {
		t.Errorf("result %+v, want %+v", *res, wantRes)
	}

	// Fields left at their zero value are not sent; the exit code 0 is.
	if _, err := c.Ping(context.Background(), client.Event{EventType: "ping", Monitor: "m", Status: "run"}); err != nil {
		t.Fatal(err)
	}
	if string(*body) != `{"event_type":"ping","monitor":"m","status":"run"}` {
		t.Errorf("sent %s", *body)
	}
}

// A ping that created its monitor says so; the trace hears the request and
// the answer as they went over the wire.
func TestIngestCreatedAndTrace(t *testing.T) {
	srv, _, _ := answerWith(t, 200, map[string]string{"X-Quota-State": "ok"}, `{"status":"success","created":true}`)
	c := client.NewIngest(srv.URL, "ck_test", nil)
	var seen []client.Exchange
	c.SetTrace(func(x client.Exchange) { seen = append(seen, x) })
	res, err := c.Ping(context.Background(), client.Event{EventType: "ping", Monitor: "m", Status: "run"})
	if err != nil || !res.Created {
		t.Fatalf("result %+v, %v: want Created", res, err)
	}
	if len(seen) != 1 || seen[0].Method != "POST" || seen[0].URL != srv.URL+"/ping" || seen[0].Status != "200 OK" ||
		string(seen[0].RequestBody) != `{"event_type":"ping","monitor":"m","status":"run"}` ||
		seen[0].Header.Get("X-Quota-State") != "ok" || string(seen[0].Body) != `{"status":"success","created":true}` {
		t.Fatalf("trace %+v", seen)
	}
	// No answer: the trace has the error.
	srv.Close()
	if _, err := c.Ping(context.Background(), client.Event{EventType: "ping", Monitor: "m", Status: "run"}); err == nil || len(seen) != 2 || seen[1].Err == nil || seen[1].Status != "" {
		t.Fatalf("after close: %v, trace %+v", err, seen)
	}
}

func TestIngestSuspended(t *testing.T) {
	srv, _, _ := answerWith(t, 200, map[string]string{"X-Quota-State": "suspended", "X-Quota-Used": "5000"},
		`{"status":"ok","quota":"suspended","resets_at":"2026-04-01T00:00:00Z","message":"monthly quota used up"}`)
	res, err := client.NewIngest(srv.URL, "ck_test", nil).Ping(context.Background(), client.Event{EventType: "ping", Monitor: "m", Status: "run"})
	if err != nil {
		t.Fatal(err)
	}
	want := client.PingResult{Status: "ok", Suspended: true, Message: "monthly quota used up", Quota: client.Quota{
		State: "suspended", Used: ptr(int64(5000)), Reset: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC),
	}}
	if !reflect.DeepEqual(*res, want) {
		t.Errorf("result %+v, want %+v", *res, want)
	}
}

func TestIngestErrors(t *testing.T) {
	for _, tc := range []struct {
		status     int
		header     map[string]string
		body       string
		want       client.APIError
		retryable  bool
		retryAfter time.Duration
	}{
		{400, nil, `{"error":"required field missing: status"}`, client.APIError{Status: 400, Message: "required field missing: status"}, false, 0},
		{401, nil, `{"error":"unauthorized"}`, client.APIError{Status: 401, Message: "unauthorized"}, false, 0},
		{403, nil, `{"status":"error","code":"monitor_limit_reached","message":"plan allows 5 monitors"}`,
			client.APIError{Status: 403, Code: "monitor_limit_reached", Message: "plan allows 5 monitors"}, false, 0},
		{413, nil, `{"error":"request body too large"}`, client.APIError{Status: 413, Message: "request body too large"}, false, 0},
		{429, map[string]string{"Retry-After": "2"}, `{"error":"rate_limited"}`, client.APIError{Status: 429, Message: "rate_limited"}, true, 2 * time.Second},
		{500, nil, "oops", client.APIError{Status: 500, Message: "oops"}, false, 0},
		{502, nil, "", client.APIError{Status: 502, Message: "Bad Gateway"}, true, 0},
		{503, map[string]string{"Retry-After": "1"}, `{"status":"unavailable","reason":"no leader"}`,
			client.APIError{Status: 503, Message: "no leader"}, true, time.Second},
		{504, nil, "", client.APIError{Status: 504, Message: "Gateway Timeout"}, true, 0},
	} {
		srv, _, _ := answerWith(t, tc.status, tc.header, tc.body)
		_, err := client.NewIngest(srv.URL, "ck_test", nil).Ping(context.Background(), client.Event{EventType: "ping", Monitor: "m", Status: "run"})
		var ae *client.APIError
		if !errors.As(err, &ae) || *ae != tc.want {
			t.Errorf("HTTP %d: error %#v, want %+v", tc.status, err, tc.want)
			continue
		}
		if client.Retryable(err) != tc.retryable || client.RetryAfter(err) != tc.retryAfter {
			t.Errorf("HTTP %d: retryable %v, retry after %v", tc.status, client.Retryable(err), client.RetryAfter(err))
		}
	}
}

func TestIngestRetryAfterDate(t *testing.T) {
	at := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	srv, _, _ := answerWith(t, 429, map[string]string{"Retry-After": at}, `{"error":"rate_limited"}`)
	_, err := client.NewIngest(srv.URL, "ck_test", nil).Ping(context.Background(), client.Event{})
	if d := client.RetryAfter(err); d < 80*time.Second || d > 90*time.Second {
		t.Errorf("retry after %v, want about 90s", d)
	}
}

func TestIngestNetworkErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	c := client.NewIngest(srv.URL, "ck_test", nil)
	_, err := c.Ping(context.Background(), client.Event{})
	var ae *client.APIError
	if err == nil || errors.As(err, &ae) || !client.Retryable(err) {
		t.Errorf("unreachable service: error %v, retryable %v", err, client.Retryable(err))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Ping(ctx, client.Event{}); err == nil || client.Retryable(err) {
		t.Errorf("canceled context: error %v, retryable %v", err, client.Retryable(err))
	}
	if client.Retryable(nil) || client.Retryable(errors.New("something else")) {
		t.Error("nil or a foreign error is retryable")
	}
}
