package httpprobe_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"lookout/internal/probe"
	"lookout/internal/probe/probetest"
)

// api answers like an endpoint people watch: /health with a JSON body,
// /echo with what it was sent, /private only with the right token or
// password, /slow after a pause, /moved as a redirect.
func api(t *testing.T) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status": "degraded", "version": 3, "checks": [{"name": "db", "ok": true}]}`)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		out, _ := json.Marshal(map[string]string{"method": r.Method, "body": string(body), "host": r.Host,
			"type": r.Header.Get("Content-Type"), "agent": r.UserAgent(), "x": r.Header.Get("X-Custom")})
		_, _ = w.Write(out)
	})
	mux.HandleFunc("/private", func(w http.ResponseWriter, r *http.Request) {
		user, pass, basic := r.BasicAuth()
		if r.Header.Get("Authorization") == "Bearer s3cret" || basic && user == "watch" && pass == "pa55" {
			_, _ = io.WriteString(w, "welcome")
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(300 * time.Millisecond)
		_, _ = io.WriteString(w, "late")
	})
	mux.Handle("/moved", http.RedirectHandler("/health", http.StatusFound))
	mux.HandleFunc("/maintenance", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "<html>down for maintenance</html>")
	})
	return mux
}

func TestHeadersBodyAndMethod(t *testing.T) {
	srv := probetest.Server(t, api(t))
	r := run(t, probe.Target{URL: srv.URL + "/echo", Method: "post", Body: `{"ping": 1}`,
		Headers: []probe.Header{{Name: "Content-Type", Value: "application/json"}, {Name: "X-Custom", Value: "yes"}, {Name: "Host", Value: "internal.test"}, {Name: "User-Agent", Value: "mine"}},
		JSONPath: []probe.JSONAssertion{
			{Path: "$.method", Equals: `"POST"`}, {Path: "$.body", Equals: `"{\"ping\": 1}"`}, {Path: "$.host", Equals: `"internal.test"`},
			{Path: "$.type", Equals: `"application/json"`}, {Path: "$.x", Equals: `"yes"`}, {Path: "$.agent", Equals: `"mine"`},
		}})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
}

func TestAuth(t *testing.T) {
	srv := probetest.Server(t, api(t))
	for _, tc := range []struct {
		name string
		t    probe.Target
		ok   bool
	}{
		{"bearer", probe.Target{Headers: []probe.Header{{Name: "Authorization", Value: "Bearer s3cret"}}}, true},
		{"wrong bearer", probe.Target{Headers: []probe.Header{{Name: "Authorization", Value: "Bearer nope"}}}, false},
		{"basic", probe.Target{BasicAuth: &probe.BasicAuth{Username: "watch", Password: "pa55"}}, true},
		{"wrong basic", probe.Target{BasicAuth: &probe.BasicAuth{Username: "watch", Password: "guess"}}, false},
		{"none", probe.Target{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.t.URL, tc.t.ExpectedContent = srv.URL+"/private", "welcome"
			r := run(t, tc.t)
			if tc.ok != (r.Err == nil) {
				t.Fatalf("err = %v, want ok %v", r.Err, tc.ok)
			}
			if !tc.ok && (r.Err.Kind != probe.KindStatus || r.Err.Message != "the status is 401, expected 2xx or 3xx") {
				t.Fatalf("err = %+v", *r.Err)
			}
		})
	}
}

func TestFollowRedirects(t *testing.T) {
	srv := probetest.Server(t, api(t))
	r := run(t, probe.Target{URL: srv.URL + "/moved", ExpectedStatus: 200})
	if r.Err != nil || r.HTTP.Redirects != 1 {
		t.Fatalf("following: err %v, redirects %d", r.Err, r.HTTP.Redirects)
	}
	r = run(t, probe.Target{URL: srv.URL + "/moved", ExpectedStatus: 302, NoRedirects: true})
	if r.Err != nil || r.HTTP.Redirects != 0 || r.HTTP.StatusCode != 302 {
		t.Fatalf("not following: err %v, %+v", r.Err, *r.HTTP)
	}
	r = run(t, probe.Target{URL: srv.URL + "/moved", ExpectedStatus: 200, NoRedirects: true})
	wantErr(t, r, probe.KindStatus, false)
}

func TestExpectedStatuses(t *testing.T) {
	srv := probetest.Server(t, api(t))
	for _, tc := range []struct {
		path string
		list []string
		msg  string // "" when it passes
	}{
		{"/health", []string{"2xx"}, ""},
		{"/health", []string{"204", "200"}, ""},
		{"/moved", []string{"3xx"}, ""},   // not followed: the 302 itself
		{"/private", []string{"4xx"}, ""}, // a 401 is what this check expects
		{"/private", []string{"200", "3xx"}, "the status is 401, expected 200 or 3xx"},
		{"/health", []string{"201", "202", "5xx"}, "the status is 200, expected 201, 202 or 5xx"},
	} {
		r := run(t, probe.Target{URL: srv.URL + tc.path, ExpectedStatuses: tc.list, NoRedirects: tc.path == "/moved"})
		switch {
		case tc.msg == "" && r.Err != nil:
			t.Errorf("%s %v: %v", tc.path, tc.list, r.Err)
		case tc.msg != "" && (r.Err == nil || r.Err.Message != tc.msg):
			t.Errorf("%s %v: err %v, want %q", tc.path, tc.list, r.Err, tc.msg)
		}
	}
}

func TestContentAbsent(t *testing.T) {
	srv := probetest.Server(t, api(t))
	if r := run(t, probe.Target{URL: srv.URL + "/health", ContentAbsent: "maintenance"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	r := run(t, probe.Target{URL: srv.URL + "/maintenance", ContentAbsent: "maintenance"})
	wantErr(t, r, probe.KindContentPresent, false)
	if r.Err.Message != `the body contains "maintenance", which must be absent` {
		t.Fatalf("message %q", r.Err.Message)
	}
}

func TestJSONPath(t *testing.T) {
	srv := probetest.Server(t, api(t))
	pass := []probe.JSONAssertion{{Path: "$.version", Equals: "3"}, {Path: "$.checks[0].ok", Equals: "true"}, {Path: "$.checks[0].name", Equals: `"db"`}}
	if r := run(t, probe.Target{URL: srv.URL + "/health", JSONPath: pass}); r.Err != nil {
		t.Fatal(r.Err)
	}
	for _, tc := range []struct {
		url  string
		a    []probe.JSONAssertion
		want string
	}{
		{"/health", []probe.JSONAssertion{{Path: "$.status", Equals: `"ok"`}}, `$.status was "degraded", expected "ok"`},
		{"/health", []probe.JSONAssertion{{Path: "$.uptime", Equals: `"ok"`}}, `$.uptime is missing, expected "ok"`},
		{"/health", []probe.JSONAssertion{{Path: "$.checks", Equals: `1`}}, `$.checks was an array, expected 1`},
		{"/health", []probe.JSONAssertion{{Path: "$.version", Equals: `"3"`}, {Path: "$.status", Equals: `"ok"`}},
			`$.version was 3, expected "3"; $.status was "degraded", expected "ok"`},
		{"/maintenance", []probe.JSONAssertion{{Path: "$.status", Equals: `"ok"`}},
			"$.status: the body is not JSON within its first 1,048,576 bytes (invalid character '<' looking for beginning of value)"},
	} {
		r := run(t, probe.Target{URL: srv.URL + tc.url, JSONPath: tc.a})
		wantErr(t, r, probe.KindJSONPath, false)
		if r.Err.Message != tc.want {
			t.Errorf("message %q, want %q", r.Err.Message, tc.want)
		}
	}
}

// A JSON body longer than the cap is read only up to it: a value within
// it is found, one beyond it is not JSON as far as it was read.
func TestJSONPathCapped(t *testing.T) {
	big := `{"status": "ok", "pad": "` + strings.Repeat("x", 2<<20) + `", "late": 1}`
	srv := probetest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, big) }))
	if r := run(t, probe.Target{URL: srv.URL, JSONPath: []probe.JSONAssertion{{Path: "$.status", Equals: `"ok"`}}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	r := run(t, probe.Target{URL: srv.URL, JSONPath: []probe.JSONAssertion{{Path: "$.late", Equals: `1`}}})
	wantErr(t, r, probe.KindJSONPath, false)
	if !strings.Contains(r.Err.Message, "it ends before the value") {
		t.Fatalf("message %q", r.Err.Message)
	}
}

func TestMaxResponse(t *testing.T) {
	srv := probetest.Server(t, api(t))
	if r := run(t, probe.Target{URL: srv.URL + "/health", MaxResponse: 5 * time.Second}); r.Err != nil {
		t.Fatal(r.Err)
	}
	r := run(t, probe.Target{URL: srv.URL + "/slow", MaxResponse: 100 * time.Millisecond, ExpectedContent: "nope"})
	// Slow is a failure, not a transient one; every failed assertion is named.
	wantErr(t, r, probe.KindTooSlow, false)
	msg := r.Err.Message
	if !strings.HasPrefix(msg, "answered in ") || !strings.Contains(msg, " ms, limit 100 ms; the expected content is not in") {
		t.Fatalf("message %q", msg)
	}
}

// A redirect to another host gets none of the check's secret headers
// (net/http drops only Authorization and cookies); one to the same host
// keeps them.
func TestRedirectDropsSecretsForAnotherHost(t *testing.T) {
	seen := map[string]string{}
	var mu sync.Mutex
	record := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[name] = r.Header.Get("X-Api-Key") + "|" + r.Header.Get("Accept")
			mu.Unlock()
		}
	}
	other := probetest.Server(t, record("other"))
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	mux := http.NewServeMux()
	mux.Handle("/away", http.RedirectHandler(otherURL+"/", http.StatusFound))
	mux.Handle("/here", http.RedirectHandler("/final", http.StatusFound))
	mux.Handle("/final", record("final"))
	srv := probetest.Server(t, mux)
	headers := []probe.Header{{Name: "X-Api-Key", Value: "k3y"}, {Name: "Accept", Value: "text/plain"}}
	for _, path := range []string{"/away", "/here"} {
		if r := run(t, probe.Target{URL: srv.URL + path, Headers: headers, ExpectedStatus: 200}); r.Err != nil {
			t.Fatalf("%s: %v", path, r.Err)
		}
	}
	if seen["other"] != "|text/plain" || seen["final"] != "k3y|text/plain" {
		t.Fatalf("headers seen: %v", seen)
	}
}
