package panel_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"lookout/control/panel"
)

// A session signed by one node is accepted by another node that derived
// the same key (every node of a cluster does): nothing about it is kept in
// a node's memory, so a failover signs nobody out. A node with another
// key (another cluster secret) does not accept it.
func TestASessionWorksOnEveryNodeWithTheKey(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	u, _ := url.Parse(n.URL)
	cookies := b.c.Jar.Cookies(u)

	other := func(key []byte) string {
		p, err := panel.New(panel.Options{Cluster: n.Cluster, State: n.Store, Admin: n.Admin, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		p.Register(mux)
		p.Start()
		srv := httptest.NewServer(mux)
		t.Cleanup(func() { p.Stop(); srv.Close() })
		return srv.URL
	}
	for _, tc := range []struct {
		name string
		key  []byte
		want int
	}{{"same key", testKey, http.StatusOK}, {"other key", []byte(strings.Repeat("x", 32)), http.StatusSeeOther}} {
		base := other(tc.key)
		bu, _ := url.Parse(base)
		b.c.Jar.SetCookies(bu, cookies)
		req, _ := http.NewRequest("GET", base+"/", nil)
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: GET / on another node: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}

// Over HTTPS the cookies are Secure.
func TestCookiesAreSecureOverTLS(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	p, err := panel.New(panel.Options{Cluster: n.Cluster, State: n.Store, Admin: n.Admin, Key: testKey, Secure: true})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Register(mux)
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	c := srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	login := resp.Cookies()
	if len(login) != 1 || !login[0].Secure || !login[0].HttpOnly {
		t.Fatalf("sign-in form cookie: %+v", login)
	}
	form := url.Values{"email": {a.Email}, "password": {a.Password}, "csrf": {csrfRe.FindStringSubmatch(string(body))[1]}}
	req, _ := http.NewRequest("POST", srv.URL+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(login[0])
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "lookout_session" {
			session = ck
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == nil || !session.Secure || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode {
		t.Fatalf("sign in over TLS: %d, session cookie %+v", resp.StatusCode, session)
	}
}
