package channeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Request is one request a Receiver got.
type Request struct {
	Method string
	// URI is the request target: path and query.
	URI    string
	Header http.Header
	Body   []byte
}

// Dump renders the request for a golden file: the method and target,
// the named headers in the given order, and the body (indented when it is
// JSON).
func (r Request) Dump(headers ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\n", r.Method, r.URI)
	for _, h := range headers {
		for _, v := range r.Header.Values(h) {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	b.WriteString("\n")
	if err := json.Indent(&b, r.Body, "", "  "); err != nil {
		b.Write(r.Body)
	}
	b.WriteString("\n")
	return b.Bytes()
}

// Receiver is an HTTP server on loopback that records every request and
// answers with a status chosen by the test (202 until told otherwise).
type Receiver struct {
	*httptest.Server

	mu       sync.Mutex
	requests []Request
	status   int
	body     string
	hangUp   bool
}

// NewReceiver starts a Receiver, closed when the test ends.
func NewReceiver(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{status: http.StatusAccepted}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

// Respond makes the receiver answer with status and body from now on.
func (r *Receiver) Respond(status int, body string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status, r.body, r.hangUp = status, body, false
}

// HangUp makes the receiver close the connection without an answer.
func (r *Receiver) HangUp() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hangUp = true
}

// Requests returns the requests received so far.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// Last returns the last request, failing the test when there is none.
func (r *Receiver) Last(t testing.TB) Request {
	t.Helper()
	reqs := r.Requests()
	if len(reqs) == 0 {
		t.Fatal("the receiver got no request")
	}
	return reqs[len(reqs)-1]
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.requests = append(r.requests, Request{Method: req.Method, URI: req.RequestURI, Header: req.Header.Clone(), Body: body})
	status, respBody, hangUp := r.status, r.body, r.hangUp
	r.mu.Unlock()
	if hangUp {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, respBody)
}
