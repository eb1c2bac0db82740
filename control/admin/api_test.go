package admin_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"lookout/cluster"
	"lookout/control/admin"
	"lookout/control/controltest"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// noLeader is what the real node returns after waiting in vain for a leader.
func noLeader() error { return fmt.Errorf("wait for a leader: %w", cluster.ErrNoLeader) }

func TestAuth(t *testing.T) {
	srv := controltest.NewServer(t)
	tests := []struct{ name, auth, msg string }{
		{"no header", "", "missing operator token"},
		{"basic scheme", "Basic dXNlcjpwYXNz", "missing operator token"},
		{"bearer without token", "Bearer ", "missing operator token"},
		{"wrong token", "Bearer nope", "invalid operator token"},
		{"token prefix", "Bearer " + controltest.Token[:5], "invalid operator token"},
		{"token plus", "Bearer " + controltest.Token + "x", "invalid operator token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ep := range []struct{ method, path, body string }{
				{"POST", "/admin/v1/accounts", `{"email":"a@example.com"}`},
				{"GET", "/admin/v1/cluster", ""},
				{"GET", "/admin/v1/no-such-thing", ""},
			} {
				r := doToken(t, srv, ep.method, ep.path, ep.body, tt.auth)
				r.wantError(t, http.StatusUnauthorized, "unauthenticated", tt.msg)
				if r.header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
			}
		})
	}
	// The scheme is case-insensitive.
	doToken(t, srv, "GET", "/admin/v1/cluster", "", "bearer "+controltest.Token).wantStatus(t, http.StatusOK)
	if accounts, _ := srv.Store.Accounts(); len(accounts) != 0 {
		t.Errorf("unauthenticated requests created %d accounts", len(accounts))
	}
}

// Without a configured token the API refuses everything, even an empty
// bearer token.
func TestNoTokenConfigured(t *testing.T) {
	api := admin.New(admin.Options{Cluster: &resultCluster{}, Token: ""})
	mux := http.NewServeMux()
	api.Register(mux)
	for _, auth := range []string{"", "Bearer ", "Bearer x"} {
		req := httptest.NewRequest("GET", "/admin/v1/cluster", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, w.Code)
		}
	}
}

func TestUnknownEndpoints(t *testing.T) {
	srv := controltest.NewServer(t)
	do(t, srv, "GET", "/admin/v1/nothing", "").wantError(t, http.StatusNotFound, "not_found", "no such endpoint")
	r := do(t, srv, "DELETE", "/admin/v1/accounts", "")
	r.wantError(t, http.StatusMethodNotAllowed, "method_not_allowed", "")
	if r.header.Get("Allow") == "" {
		t.Error("405 without Allow")
	}
}

func TestUnavailable(t *testing.T) {
	deadline, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-deadline.Done()
	for name, err := range map[string]error{
		"no leader": noLeader(),
		"deadline":  fmt.Errorf("wait: %w", deadline.Err()),
		"shutdown":  fmt.Errorf("apply: %w", cluster.ErrShutdown),
	} {
		t.Run(name, func(t *testing.T) {
			srv := controltest.NewServer(t)
			created := mustCreateAccount(t, srv, "ops@example.com")
			srv.Cluster.FailApply(err)
			for _, req := range []struct{ method, path, body string }{
				{"POST", "/admin/v1/accounts", `{"email":"b@example.com"}`},
				{"PUT", "/admin/v1/accounts/" + created.ID + "/plan", `{}`},
				{"POST", "/admin/v1/accounts/" + created.ID + "/keys", `{"type":"ingest","name":"ci"}`},
				{"DELETE", "/admin/v1/accounts/" + created.ID + "/keys/k", ""},
				{"POST", "/admin/v1/accounts/" + created.ID + "/notification-groups", `{"name":"ops","channels":[]}`},
				{"POST", "/admin/v1/agent-tokens", `{"region":"eu-west","name":"a"}`},
			} {
				r := do(t, srv, req.method, req.path, req.body)
				r.wantError(t, http.StatusServiceUnavailable, "unavailable", "")
				if r.header.Get("Retry-After") != "1" {
					t.Errorf("%s %s: Retry-After %q, want 1", req.method, req.path, r.header.Get("Retry-After"))
				}
			}
		})
	}
}

// resultCluster answers every Apply with a fixed result or error.
type resultCluster struct {
	result *raftv1.Result
	err    error
}

func (c *resultCluster) Apply(context.Context, *raftv1.Command) (*raftv1.Result, error) {
	return c.result, c.err
}
func (c *resultCluster) ConsistentRead(context.Context) error { return nil }
func (c *resultCluster) Restore(context.Context, io.ReaderAt, int64) error {
	return c.err
}
func (c *resultCluster) Status(context.Context) (cluster.Status, error) {
	return cluster.Status{}, c.err
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name   string
		c      *resultCluster
		status int
		code   string
	}{
		{"invalid is a bug", &resultCluster{result: &raftv1.Result{Status: raftv1.Status_STATUS_INVALID, Message: "bad"}}, 500, "internal"},
		{"unspecified", &resultCluster{result: &raftv1.Result{}}, 500, "internal"},
		{"other error", &resultCluster{err: fmt.Errorf("disk on fire")}, 500, "internal"},
		{"not found", &resultCluster{result: &raftv1.Result{Status: raftv1.Status_STATUS_NOT_FOUND, Message: "x"}}, 404, "not_found"},
		{"conflict", &resultCluster{result: &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Message: "x"}}, 409, "conflict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := admin.New(admin.Options{Cluster: tt.c, Token: "t"})
			mux := http.NewServeMux()
			api.Register(mux)
			srv := httptest.NewServer(mux)
			defer srv.Close()
			r := doToken(t, &controltest.Server{URL: srv.URL}, "POST", "/admin/v1/agent-tokens", `{"region":"eu","name":"a"}`, "Bearer t")
			r.wantError(t, tt.status, tt.code, "")
		})
	}
}

func TestCluster(t *testing.T) {
	srv := controltest.NewServer(t)
	want := cluster.Status{Leader: "", Nodes: []cluster.ServerStatus{
		{ID: "a", HTTPAddr: "10.0.0.1:8080", RaftAddr: "10.0.0.1:8081", Role: "follower", Voter: true, LastContactMs: -1, AppliedIndex: 7},
		{ID: "b", HTTPAddr: "10.0.0.2:8080", RaftAddr: "10.0.0.2:8081", Role: "gone", Voter: true, LastContactMs: -1},
	}}
	srv.Cluster.SetStatus(want)
	// No leader: the status still answers, and makes no consistent read.
	srv.Cluster.FailReads(noLeader())
	r := do(t, srv, "GET", "/admin/v1/cluster", "")
	r.wantStatus(t, http.StatusOK)
	var got cluster.Status
	r.decode(t, &got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if srv.Cluster.Reads() != 0 {
		t.Error("GET cluster made a consistent read")
	}

	srv.Cluster.SetStatus(cluster.Status{})
	r = do(t, srv, "GET", "/admin/v1/cluster", "")
	if string(r.body) != `{"leader":"","nodes":[]}`+"\n" {
		t.Errorf("empty status body %s", r.body)
	}
}
