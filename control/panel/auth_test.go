package panel_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"lookout/control/admin"
)

func TestSignInAndOut(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()

	// Not signed in: pages send to the sign-in form, forms are refused.
	p := b.get("/keys")
	if p.Status != http.StatusSeeOther || p.Location != "/login?next=%2Fkeys" {
		t.Fatalf("GET /keys signed out: %d %q", p.Status, p.Location)
	}
	b.post("/keys", url.Values{"name": {"x"}, "type": {"ingest"}}).want(t, http.StatusUnauthorized)

	b.get("/login?next=%2Fkeys").want(t, http.StatusOK, `name="email"`, `name="password"`, `name="csrf"`, `value="/keys"`)

	// A form without its token, or with another one, is refused.
	b.post("/login", url.Values{"email": {a.Email}, "password": {a.Password}, "csrf": {""}}).want(t, http.StatusForbidden, "expired")
	b.get("/login")
	b.post("/login", url.Values{"email": {a.Email}, "password": {a.Password}, "csrf": {strings.Repeat("0", 32)}}).want(t, http.StatusForbidden)

	// Wrong password, unknown e-mail: the same answer.
	b.get("/login")
	b.post("/login", url.Values{"email": {a.Email}, "password": {"wrong password"}}).want(t, http.StatusUnauthorized, "Wrong e-mail or password")
	b.post("/login", url.Values{"email": {"nobody@example.com"}, "password": {a.Password}}).want(t, http.StatusUnauthorized, "Wrong e-mail or password")

	// Right: a session cookie, HttpOnly and SameSite=Lax, then next.
	b.get("/login")
	p = b.post("/login", url.Values{"email": {strings.ToUpper(a.Email)}, "password": {a.Password}, "next": {"/keys"}})
	if p.Status != http.StatusSeeOther || p.Location != "/keys" {
		t.Fatalf("sign in: %d %q %s", p.Status, p.Location, p.Body)
	}
	var cookie string
	for _, c := range p.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "lookout_session=") {
			cookie = c
		}
	}
	if !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Lax") || strings.Contains(cookie, "Secure") {
		t.Fatalf("session cookie %q: want HttpOnly, SameSite=Lax, not Secure over plain HTTP", cookie)
	}
	b.get("/keys").want(t, http.StatusOK, "Create a key", a.Email)

	// Sign-out needs the token too.
	b.post("/logout", url.Values{"csrf": {"nope"}}).want(t, http.StatusForbidden)
	p = b.post("/logout", nil)
	if p.Status != http.StatusSeeOther || p.Location != "/login" {
		t.Fatalf("sign out: %d %q", p.Status, p.Location)
	}
	if p := b.get("/"); p.Status != http.StatusSeeOther {
		t.Fatalf("GET / after sign-out: %d", p.Status)
	}
}

// Without a leader a sign-out cannot be recorded: the visitor is told so
// and stays signed in, rather than seeming signed out with a cookie that
// other copies of would keep working.
func TestSignOutWithoutALeader(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	n.Cluster.FailApply(errors.New("no leader"))
	b.post("/logout", nil).want(t, http.StatusServiceUnavailable, "still signed in")
	b.get("/").want(t, http.StatusOK, a.Email)
	n.Cluster.FailApply(nil)
	if p := b.post("/logout", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("sign out: %d", p.Status)
	}
	if p := b.get("/"); p.Status != http.StatusSeeOther {
		t.Fatalf("GET / after sign-out: %d", p.Status)
	}
}

func TestSignInRedirectStaysOnThePanel(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	for _, next := range []string{"https://evil.example/", "//evil.example/", "/\\evil.example", "/live", "/\t/evil.example", "/\n/evil.example"} {
		b := n.browser()
		b.get("/login")
		p := b.post("/login", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {next}})
		if p.Status != http.StatusSeeOther || p.Location != "/" {
			t.Errorf("next %q: %d %q, want /", next, p.Status, p.Location)
		}
		// Signed in, the form sends straight on: to the same place.
		p = b.get("/login?next=" + url.QueryEscape(next))
		if p.Status != http.StatusSeeOther || p.Location != "/" {
			t.Errorf("signed in, GET /login?next=%s: %d %q, want /", url.QueryEscape(next), p.Status, p.Location)
		}
	}
	// The form keeps a path of the panel.
	b := n.browser()
	b.signIn(a)
	if p := b.get("/login?next=%2Fkeys%3Fx%3D1"); p.Location != "/keys?x=1" {
		t.Errorf("signed in, GET /login?next=/keys?x=1: %d %q", p.Status, p.Location)
	}
	if p := b.get("/login?next=/%09/evil.example"); p.Location != "/" {
		t.Errorf("signed in, GET /login?next=/%%09/evil.example: %d %q, want /", p.Status, p.Location)
	}
}

func TestFailedSignInsAreThrottled(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.get("/login")
	for i := range 5 {
		b.post("/login", url.Values{"email": {a.Email}, "password": {"wrong password"}}).want(t, http.StatusUnauthorized)
		_ = i
	}
	// Past the budget even the right password is refused, with a wait.
	p := b.post("/login", url.Values{"email": {a.Email}, "password": {a.Password}})
	p.want(t, http.StatusTooManyRequests, "Too many failed sign-ins")
	if p.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}

// Behind a proxy each client has its own budget: a password spray from
// one address does not lock another out.
func TestASprayLocksOutOnlyItsAddress(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	spray := n.browser()
	spray.from = "6.6.6.6, 203.0.113.1" // a spoofed hop, then the client
	spray.get("/login")
	for range 5 {
		spray.post("/login", url.Values{"email": {a.Email}, "password": {"guess"}}).want(t, http.StatusUnauthorized)
	}
	spray.post("/login", url.Values{"email": {a.Email}, "password": {"guess"}}).want(t, http.StatusTooManyRequests)
	// The spoofed hop is not the address: changing it changes nothing.
	spray.from = "7.7.7.7, 203.0.113.1"
	spray.post("/login", url.Values{"email": {a.Email}, "password": {a.Password}}).want(t, http.StatusTooManyRequests)

	user := n.browser()
	user.from = "203.0.113.2"
	user.signIn(a)
}

func TestAChangedPasswordEndsSessions(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	if err := n.Admin.SetPassword(context.Background(), a.ID, "a new password"); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/"); p.Status != http.StatusSeeOther {
		t.Fatalf("GET / with a session of the old password: %d", p.Status)
	}
	a.Password = "a new password"
	b.signIn(a)
}

func TestATamperedSessionIsRefused(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	other := n.signUp("other@example.com", nil)
	b := n.browser()
	b.signIn(a)
	u, _ := url.Parse(n.URL)
	var value string
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "lookout_session" {
			value = c.Value
		}
	}
	// The same signature over another account's id is not a session.
	enc, sig, _ := strings.Cut(value, ".")
	payload := must(base64.RawURLEncoding.DecodeString(enc))
	forged := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), a.ID, other.ID, 1))) + "." + sig
	if forged == value {
		t.Fatal("the session cookie does not carry the account id")
	}
	b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "lookout_session", Value: forged, Path: "/"}})
	if p := b.get("/"); p.Status != http.StatusSeeOther {
		t.Fatalf("forged session: %d", p.Status)
	}
	// An account without a password cannot sign in.
	if _, err := n.Admin.CreateAccount(context.Background(), admin.AccountRequest{Email: "nopw@example.com"}); err != nil {
		t.Fatal(err)
	}
	b.get("/login")
	b.post("/login", url.Values{"email": {"nopw@example.com"}, "password": {""}}).want(t, http.StatusUnauthorized)
}
