package httpprobe_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"lookout/internal/probe"
	"lookout/internal/probe/httpprobe"
	"lookout/internal/probe/probetest"
)

// run probes t with default options (Version 1.2.3).
func run(tb testing.TB, t probe.Target) probe.Result {
	tb.Helper()
	return httpprobe.New(probe.Options{Version: "1.2.3"}).Probe(context.Background(), t)
}

// wantErr fails unless r failed with kind, transient or not.
func wantErr(t *testing.T, r probe.Result, kind probe.Kind, transient bool) {
	t.Helper()
	if r.Err == nil {
		t.Fatalf("passed, want %s", kind)
	}
	if r.Err.Kind != kind || r.Err.Transient != transient || r.Err.Message == "" {
		t.Fatalf("err = %+v, want kind %s, transient %v and a message", *r.Err, kind, transient)
	}
}

func TestStatusAssertion(t *testing.T) {
	srv := probetest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		w.WriteHeader(code)
	}))
	for _, tc := range []struct {
		code, expected int
		kind           probe.Kind // "" when the check passes
		transient      bool
	}{
		{code: 200},
		{code: 204},
		{code: 304},
		{code: 404, kind: probe.KindStatus},
		{code: 500, kind: probe.KindStatus, transient: true},
		{code: 503, expected: 200, kind: probe.KindStatus, transient: true},
		{code: 503, expected: 503},
		{code: 404, expected: 404},
		{code: 200, expected: 201, kind: probe.KindStatus},
		{code: 404, expected: 200, kind: probe.KindStatus},
	} {
		t.Run(fmt.Sprintf("%d_expect_%d", tc.code, tc.expected), func(t *testing.T) {
			r := run(t, probe.Target{URL: srv.URL + "/?code=" + strconv.Itoa(tc.code), ExpectedStatus: tc.expected})
			if r.HTTP == nil || r.HTTP.StatusCode != tc.code {
				t.Fatalf("HTTP = %+v, want status %d", r.HTTP, tc.code)
			}
			if tc.kind == "" {
				if r.Err != nil {
					t.Fatalf("err = %v, want success", r.Err)
				}
				return
			}
			wantErr(t, r, tc.kind, tc.transient)
			if r.Transient() != tc.transient {
				t.Fatalf("Transient() = %v", r.Transient())
			}
		})
	}
}

func TestMethodAndUserAgent(t *testing.T) {
	type seen struct{ method, ua string }
	got := make(chan seen, 1)
	srv := probetest.Server(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got <- seen{r.Method, r.Header.Get("User-Agent")}
	}))
	for method, want := range map[string]string{"": "GET", "post": "POST", "HEAD": "HEAD", "DELETE": "DELETE"} {
		r := run(t, probe.Target{URL: srv.URL, Method: method, ExpectedStatus: 200})
		if r.Err != nil {
			t.Fatalf("%q: %v", method, r.Err)
		}
		if s := <-got; s.method != want || s.ua != "Lookout/1.2.3" {
			t.Fatalf("%q: server saw %+v, want %s and Lookout/1.2.3", method, s, want)
		}
	}
}

func TestRedirects(t *testing.T) {
	srv := probetest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/loop" {
			http.Redirect(w, r, "/loop", http.StatusFound)
			return
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		if n > 0 {
			http.Redirect(w, r, "/r/"+strconv.Itoa(n-1), http.StatusMovedPermanently)
			return
		}
		_, _ = w.Write([]byte("arrived"))
	}))
	// Ten redirects are followed; the expected status is the last answer's.
	r := run(t, probe.Target{URL: srv.URL + "/r/10", ExpectedStatus: 200, ExpectedContent: "arrived"})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if r.HTTP.Redirects != 10 || r.HTTP.FinalURL != srv.URL+"/r/0" || r.HTTP.StatusCode != 200 {
		t.Fatalf("HTTP = %+v, want 10 redirects to /r/0", *r.HTTP)
	}
	// The eleventh is not.
	r = run(t, probe.Target{URL: srv.URL + "/r/11", ExpectedStatus: 200})
	wantErr(t, r, probe.KindTooManyRedirects, false)
	r = run(t, probe.Target{URL: srv.URL + "/loop", ExpectedStatus: 200})
	wantErr(t, r, probe.KindTooManyRedirects, false)
	// A redirect answer is not the expected 301 once followed.
	r = run(t, probe.Target{URL: srv.URL + "/r/1", ExpectedStatus: 301})
	wantErr(t, r, probe.KindStatus, false)
}

func TestContentInFirstMiB(t *testing.T) {
	const mib = httpprobe.MaxContentSearch
	bodies := map[string]string{
		"start":    "needle" + strings.Repeat("x", 2*mib),
		"edge":     strings.Repeat("x", mib-6) + "needle" + strings.Repeat("x", 100),
		"straddle": strings.Repeat("x", mib-3) + "needle",
		"after":    strings.Repeat("x", mib+10) + "needle",
		"none":     "haystack",
		"big":      strings.Repeat("x", httpprobe.MaxBodyRead+1),
	}
	srv := probetest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(bodies[r.URL.Path[1:]]))
	}))
	for name, want := range map[string]probe.Kind{"start": "", "edge": "", "straddle": probe.KindContent, "after": probe.KindContent, "none": probe.KindContent} {
		r := run(t, probe.Target{URL: srv.URL + "/" + name, ExpectedContent: "needle"})
		if want == "" && r.Err != nil {
			t.Fatalf("%s: %v", name, r.Err)
		}
		if want != "" {
			wantErr(t, r, want, false)
		}
		if r.HTTP.ResponseBytes != int64(len(bodies[name])) || r.HTTP.BodyTruncated {
			t.Fatalf("%s: %d bytes (truncated %v), want %d", name, r.HTTP.ResponseBytes, r.HTTP.BodyTruncated, len(bodies[name]))
		}
	}
	// A body past MaxBodyRead is read up to it.
	r := run(t, probe.Target{URL: srv.URL + "/big", ExpectedStatus: 200})
	if r.Err != nil || r.HTTP.ResponseBytes != httpprobe.MaxBodyRead || !r.HTTP.BodyTruncated {
		t.Fatalf("big: err %v, HTTP %+v", r.Err, *r.HTTP)
	}
	// An empty expected content is no assertion; HEAD has no body to search.
	if r := run(t, probe.Target{URL: srv.URL + "/none", ExpectedStatus: 200}); r.Err != nil {
		t.Fatal(r.Err)
	}
	r = run(t, probe.Target{URL: srv.URL + "/start", Method: "HEAD", ExpectedContent: "needle"})
	wantErr(t, r, probe.KindContent, false)
}

func TestTimeout(t *testing.T) {
	srv := probetest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-body" {
			w.WriteHeader(200)
			_, _ = w.Write([]byte("the start"))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done() // hangs until the client gives up
	}))
	r := run(t, probe.Target{URL: srv.URL + "/hang", Timeout: time.Second, ExpectedStatus: 200})
	wantErr(t, r, probe.KindTimeout, true)
	if r.HTTP.StatusCode != 0 {
		t.Fatalf("status %d, want none", r.HTTP.StatusCode)
	}
	// The body counts too: the whole attempt is within the timeout.
	r = run(t, probe.Target{URL: srv.URL + "/slow-body", Timeout: time.Second, ExpectedStatus: 200})
	wantErr(t, r, probe.KindTimeout, true)
	if r.HTTP.StatusCode != 200 {
		t.Fatalf("status %d, want 200", r.HTTP.StatusCode)
	}
}

func TestConnectionRefusedIsTransient(t *testing.T) {
	r := run(t, probe.Target{URL: "http://127.0.0.1:" + probetest.ClosedPort(t) + "/", ExpectedStatus: 200})
	wantErr(t, r, probe.KindConnect, true)
	if !strings.Contains(r.Err.Message, "refused") {
		t.Fatalf("message %q does not say refused", r.Err.Message)
	}
}

func TestCanceledAndInvalid(t *testing.T) {
	srv := probetest.Server(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	r := httpprobe.New(probe.Options{}).Probe(ctx, probe.Target{URL: srv.URL, ExpectedStatus: 200})
	wantErr(t, r, probe.KindCanceled, false)

	r = run(t, probe.Target{URL: "http://bad host/", ExpectedStatus: 200})
	wantErr(t, r, probe.KindInvalidTarget, false)
}
