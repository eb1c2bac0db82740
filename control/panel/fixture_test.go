package panel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/crypto/bcrypt"

	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/ingest"
	"lookout/control/manage"
	"lookout/control/panel"
	"lookout/control/state"
	"lookout/internal/clientaddr"
)

// node is one control node's HTTP side on loopback: the panel beside the
// Ingest, Management and operator APIs on one mux, over a real store, as
// lookout control mounts them.
type node struct {
	t       testing.TB
	URL     string
	Store   *state.Store
	Cluster *controltest.Cluster
	Admin   *admin.API
	Panel   *panel.Panel
	// skew moves the node's clock ahead of real time (advance).
	skew *atomic.Int64
}

// advance moves the node's clock (its cluster's, the Ingest API's and the
// panel's) d ahead.
func (n *node) advance(d time.Duration) { n.skew.Add(int64(d)) }

// account is a signed-up account with its keys and password.
type account struct {
	ID, Email, Password, IngestKey, ManagementKey string
}

type health struct{}

func (health) Healthy() (bool, string) { return true, "" }
func (health) ID() string              { return "node-1" }
func (health) Leader() string          { return "node-1" }

var loopbackProxies = must(clientaddr.ParseTrusted("127.0.0.0/8,::1"))

var testKey = []byte("0123456789abcdef0123456789abcdef-panel-test-key")

// newNode starts a node; opts adjust the panel's options.
func newNode(t testing.TB, opts ...func(*panel.Options)) *node {
	t.Helper()
	store, err := state.Open(state.Options{Dir: t.TempDir(), Small: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	skew := new(atomic.Int64)
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	c := controltest.NewCluster(store, now)
	mux := http.NewServeMux()
	adminAPI := admin.New(admin.Options{Cluster: c, State: store, Token: controltest.Token, Channels: controltest.Channels(), PasswordCost: bcrypt.MinCost, Now: now})
	adminAPI.Register(mux)
	in := ingest.New(ingest.Options{Health: health{}, Cluster: c, State: store, RetentionCount: 1000, Now: now})
	in.Register(mux)
	in.Start()
	t.Cleanup(in.Stop)
	manageAPI := manage.New(manage.Options{Cluster: c, State: store})
	manageAPI.Register(mux)
	po := panel.Options{Cluster: c, State: store, Admin: adminAPI, Manage: manageAPI, Publishing: manageAPI, Key: testKey, Now: now,
		PublicURL: "https://lookout.example.com/"}
	for _, o := range opts {
		o(&po)
	}
	p, err := panel.New(po)
	if err != nil {
		t.Fatal(err)
	}
	p.Register(mux)
	p.Start()
	// As lookout control --trusted-proxies 127.0.0.0/8 would: a test
	// stands for clients behind a proxy with X-Forwarded-For.
	srv := httptest.NewServer(clientaddr.New(loopbackProxies).Wrap(mux))
	t.Cleanup(func() { p.Stop(); srv.Close() })
	return &node{t: t, URL: srv.URL, Store: store, Cluster: c, Admin: adminAPI, Panel: p, skew: skew}
}

// signUp makes an account with a panel password.
func (n *node) signUp(email string, plan *admin.PlanRequest) account {
	n.t.Helper()
	pw := "pw-" + email
	c, err := n.Admin.CreateAccount(context.Background(), admin.AccountRequest{Email: email, Password: pw, Plan: plan})
	if err != nil {
		n.t.Fatal(err)
	}
	return account{ID: c.ID, Email: email, Password: pw, IngestKey: c.IngestKey, ManagementKey: c.ManagementKey}
}

// ping sends one event through the Ingest API, as lookout ping does.
func (n *node) ping(a account, body string) {
	n.t.Helper()
	req, _ := http.NewRequest("POST", n.URL+"/ping", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.IngestKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		n.t.Fatalf("ping %s: %d %s", body, resp.StatusCode, b)
	}
}

// api calls the Management API with a's management key.
func (n *node) api(a account, method, path, body string) (int, []byte) {
	n.t.Helper()
	req, _ := http.NewRequest(method, n.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.ManagementKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// monitorUUID is the uuid of a's monitor name.
func (n *node) monitorUUID(a account, name string) string {
	n.t.Helper()
	ms, err := n.Store.Monitors(a.ID)
	if err != nil {
		n.t.Fatal(err)
	}
	for _, m := range ms {
		if m.GetName() == name {
			return m.GetUuid()
		}
	}
	n.t.Fatalf("no monitor %s", name)
	return ""
}

// browser is a cookie-keeping client that does not follow redirects;
// with from set it stands behind the proxy for that client address.
type browser struct {
	t    testing.TB
	n    *node
	c    *http.Client
	csrf string
	from string
	// who is the e-mail signed in with (signIn).
	who string
}

func (n *node) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: n.t, n: n, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	Status   int
	Body     string
	Location string
	Header   http.Header
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	if b.from != "" {
		req.Header.Set("X-Forwarded-For", b.from)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	p := page{Status: resp.StatusCode, Body: string(body), Location: resp.Header.Get("Location"), Header: resp.Header}
	if m := csrfRe.FindStringSubmatch(p.Body); m != nil {
		b.csrf = m[1]
	}
	return p
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.n.URL+path, nil)
	return b.do(req)
}

// post sends a form with the CSRF token of the last page seen (unless
// the form sets csrf itself).
func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", b.csrf)
	}
	req, _ := http.NewRequest("POST", b.n.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// signIn signs a in and fails the test unless it worked.
func (b *browser) signIn(a account) {
	b.t.Helper()
	b.get("/login")
	p := b.post("/login", url.Values{"email": {a.Email}, "password": {a.Password}})
	if p.Status != http.StatusSeeOther || p.Location != "/" {
		b.t.Fatalf("sign in: %d %s %s", p.Status, p.Location, p.Body)
	}
	b.who = a.Email
	b.get("/") // for the session's CSRF token
}

func (p page) want(t testing.TB, status int, contains ...string) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("status %d, want %d; body:\n%s", p.Status, status, p.Body)
	}
	for _, s := range contains {
		if !strings.Contains(p.Body, s) {
			t.Fatalf("page lacks %q; body:\n%s", s, p.Body)
		}
	}
}

// sse is an open event stream.
type sse struct {
	resp   *http.Response
	events chan sseEvent
}

type sseEvent struct {
	ID, Event string
	Data      map[string]any
}

// stream opens path as an event stream, with lastID as Last-Event-ID
// unless empty.
func (b *browser) stream(path, lastID string) *sse {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.n.URL+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	c := *b.c
	c.Timeout = 0
	resp, err := c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b.t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &sse{resp: resp, events: make(chan sseEvent, 100)}
	b.t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Event != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Event = line[7:]
			case strings.HasPrefix(line, "data: "):
				json.Unmarshal([]byte(line[6:]), &ev.Data)
			}
		}
	}()
	return s
}

// next waits up to d for the next message named event, skipping others.
func (s *sse) next(t testing.TB, event string, d time.Duration) sseEvent {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("stream ended before a %q message", event)
			}
			if ev.Event == event {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %q message within %v", event, d)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}
