package admin_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"lookout/control/controltest"
)

// response is one answer of the API.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with the operator token.
func do(t *testing.T, srv *controltest.Server, method, path, body string) response {
	t.Helper()
	return doToken(t, srv, method, path, body, "Bearer "+controltest.Token)
}

// doToken sends a request with the given Authorization header ("" for none).
func doToken(t *testing.T, srv *controltest.Server, method, path, body, auth string) response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// decode decodes the body into v.
func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// wantStatus fails the test unless the answer has status.
func (r response) wantStatus(t *testing.T, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
}

// wantError checks an error answer: status, code, and a message that
// starts with msgPrefix.
func (r response) wantError(t *testing.T, status int, code, msgPrefix string) {
	t.Helper()
	r.wantStatus(t, status)
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var e struct{ Message, Code string }
	r.decode(t, &e)
	if e.Code != code || !strings.HasPrefix(e.Message, msgPrefix) {
		t.Errorf("error {%q, %q}, want code %q and message starting %q", e.Code, e.Message, code, msgPrefix)
	}
}

// createdAccount is the answer to POST /admin/v1/accounts.
type createdAccount struct {
	ID            string         `json:"id"`
	Email         string         `json:"email"`
	Plan          map[string]any `json:"plan"`
	IngestKey     string         `json:"ingest_key"`
	ManagementKey string         `json:"management_key"`
}

// mustCreateAccount makes an account with the default plan.
func mustCreateAccount(t *testing.T, srv *controltest.Server, email string) createdAccount {
	t.Helper()
	r := do(t, srv, "POST", "/admin/v1/accounts", `{"email":"`+email+`"}`)
	r.wantStatus(t, http.StatusCreated)
	var a createdAccount
	r.decode(t, &a)
	return a
}
