package ingest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// fakeHealth stands in for the cluster node (the edge of this package).
type fakeHealth struct {
	ok     bool
	reason string
}

func (f fakeHealth) Healthy() (bool, string) { return f.ok, f.reason }
func (f fakeHealth) ID() string              { return "n1" }
func (f fakeHealth) Leader() string {
	if f.ok {
		return "n2"
	}
	return ""
}

func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		health fakeHealth
		status int
		body   map[string]string
	}{
		{"leader known", fakeHealth{ok: true}, 200, map[string]string{"status": "ok", "node": "n1", "leader": "n2"}},
		{"no leader", fakeHealth{reason: "no leader"}, 503, map[string]string{"status": "unavailable", "reason": "no leader", "node": "n1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			New(Options{Health: tc.health}).Register(mux)
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("content type %q", ct)
			}
			var got map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.body) {
				t.Fatalf("body %v, want %v", got, tc.body)
			}
			for k, v := range tc.body {
				if got[k] != v {
					t.Fatalf("body %v, want %v", got, tc.body)
				}
			}
		})
	}
}
