package panel_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"lookout/control/admin"
	"lookout/control/panel"
)

// ssoNode is a node whose panel signs in with the test's provider.
func ssoNode(t *testing.T, prov *oidcProvider, domains ...string) *node {
	return newNode(t, func(o *panel.Options) {
		o.SSO = &panel.SSOOptions{Issuer: prov.URL, ClientID: prov.clientID, ClientSecret: prov.clientSecret, AllowedDomains: domains}
	})
}

// ssoSignIn goes through the flow in b from start (a path of the panel:
// /login/sso?...): to the provider, which signs in at once, and back to
// the callback. The provider sends the browser to the public URL
// (https://lookout.example.com, a proxy in front of the node), which the
// test replaces by the node's address. It returns the callback's answer.
func ssoSignIn(t *testing.T, b *browser, start string) page {
	t.Helper()
	p := b.get(start)
	if p.Status != http.StatusSeeOther || !strings.Contains(p.Location, "/authorize?") {
		t.Fatalf("start: %d %q %s", p.Status, p.Location, p.Body)
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(p.Location)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(back, "https://lookout.example.com/login/sso/callback?") {
		t.Fatalf("provider: %d %q", resp.StatusCode, back)
	}
	return b.get(strings.TrimPrefix(back, "https://lookout.example.com"))
}

// Signing in with SSO: a good sign-in, then every way one is refused.
func TestSignInWithSSO(t *testing.T) {
	prov := newOIDCProvider(t)
	n := ssoNode(t, prov)
	a := n.signUp("ops@example.com", nil)

	// The sign-in page offers it.
	n.browser().get("/login?next=%2Fchannels").want(t, http.StatusOK, `href="/login/sso?next=%2fchannels"`, "Sign in with SSO")

	// A good sign-in: the user whose e-mail the provider verified, back
	// where it was going.
	prov.signInAs("OPS@example.com")
	b := n.browser()
	p := ssoSignIn(t, b, "/login/sso?next=%2Fchannels")
	if p.Status != http.StatusSeeOther || p.Location != "/channels" {
		t.Fatalf("callback: %d %q %s", p.Status, p.Location, p.Body)
	}
	b.get("/channels").want(t, http.StatusOK, a.Email)
	if prov.pkceChecked != 1 {
		t.Fatalf("%d token requests passed the PKCE check, want 1", prov.pkceChecked)
	}

	for _, tc := range []struct {
		name   string
		set    func(p *oidcProvider)
		status int
		msg    string
	}{
		{"wrong audience", func(p *oidcProvider) { p.Audience = "another-client" }, http.StatusUnauthorized, "could not be verified"},
		{"expired token", func(p *oidcProvider) { p.Expires = -time.Minute }, http.StatusUnauthorized, "could not be verified"},
		{"bad nonce", func(p *oidcProvider) { p.Nonce = "not-the-flows-nonce" }, http.StatusUnauthorized, "not for this sign-in"},
		{"unverified e-mail", func(p *oidcProvider) { p.Verified = false }, http.StatusForbidden, "has not verified your e-mail"},
		{"unverified e-mail, absent claim", func(p *oidcProvider) { p.Verified = nil }, http.StatusForbidden, "has not verified your e-mail"},
		{"unknown e-mail", func(p *oidcProvider) { p.Email = "stranger@example.com" }, http.StatusForbidden, "stranger@example.com has no user here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prov.signInAs(a.Email)
			prov.set(tc.set)
			b := n.browser()
			p := ssoSignIn(t, b, "/login/sso")
			p.want(t, tc.status, tc.msg)
			if p := b.get("/"); p.Status != http.StatusSeeOther {
				t.Fatalf("signed in after a refused sign-in: %d", p.Status)
			}
		})
	}

	// The callback needs the flow's cookie and its state: a code sent to
	// another browser, or a forged state, signs nobody in.
	prov.signInAs(a.Email)
	b = n.browser()
	start := b.get("/login/sso")
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(start.Location)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	callback := strings.TrimPrefix(resp.Header.Get("Location"), "https://lookout.example.com")
	n.browser().get(callback).want(t, http.StatusForbidden, "did not start here")
	u, _ := url.Parse(callback)
	q := u.Query()
	q.Set("state", "forged")
	u.RawQuery = q.Encode()
	b.get(u.String()).want(t, http.StatusForbidden, "did not start here")
	// The provider's own refusal.
	b2 := n.browser()
	auth, _ := url.Parse(b2.get("/login/sso").Location)
	b2.get("/login/sso/callback?error=access_denied&state="+auth.Query().Get("state")).want(t, http.StatusUnauthorized, "did not sign you in (access_denied)")
}

// --oidc-allowed-domains: an e-mail of another domain is refused even when
// it has a user.
func TestSSOAllowedDomains(t *testing.T) {
	prov := newOIDCProvider(t)
	n := ssoNode(t, prov, "Example.com", "@corp.example")
	a := n.signUp("ops@example.com", nil)
	if _, err := n.Admin.AddUser(t.Context(), a.ID, admin.UserRequest{Email: "contractor@other.org", Role: "viewer"}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Admin.AddUser(t.Context(), a.ID, admin.UserRequest{Email: "dev@corp.example", Role: "viewer"}); err != nil {
		t.Fatal(err)
	}
	prov.signInAs("contractor@other.org")
	ssoSignIn(t, n.browser(), "/login/sso").want(t, http.StatusForbidden, "not open to contractor@other.org")
	for _, email := range []string{"ops@EXAMPLE.com", "dev@corp.example"} {
		prov.signInAs(email)
		if p := ssoSignIn(t, n.browser(), "/login/sso"); p.Status != http.StatusSeeOther {
			t.Fatalf("%s: %d %s", email, p.Status, p.Body)
		}
	}
}

// An invitation accepted with SSO: the provider must have signed in the
// invited e-mail; the user then has the invite's role and no password.
func TestAcceptAnInviteWithSSO(t *testing.T) {
	prov := newOIDCProvider(t)
	n := ssoNode(t, prov)
	tm := newTeam(t, n)
	token := tm.invite(t, "new@example.com", "editor")

	b := n.browser()
	b.get("/invite/"+token).want(t, http.StatusOK, `href="/login/sso?invite=`+token+`"`)

	// Signed in at the provider as someone else: refused, the link still works.
	prov.signInAs("someone@example.com")
	ssoSignIn(t, b, "/login/sso?invite="+token).want(t, http.StatusForbidden, "another e-mail address")

	prov.signInAs("New@example.com")
	if p := ssoSignIn(t, b, "/login/sso?invite="+token); p.Status != http.StatusSeeOther || p.Location != "/" {
		t.Fatalf("accept with SSO: %d %q %s", p.Status, p.Location, p.Body)
	}
	b.get("/").want(t, http.StatusOK, "new@example.com", `href="/monitors/new"`)
	u, err := n.Store.UserByEmail("new@example.com")
	if err != nil || u.GetRole() != "editor" || len(u.GetPasswordHash()) != 0 || u.GetAccountId() != tm.acct.ID {
		t.Fatalf("the user made by SSO: %v %v", u, err)
	}
	n.browser().get("/invite/"+token).want(t, http.StatusNotFound)
	// Later sign-ins need no invitation.
	if p := ssoSignIn(t, n.browser(), "/login/sso"); p.Status != http.StatusSeeOther {
		t.Fatalf("a later sign-in: %d %s", p.Status, p.Body)
	}
	// Without a password, the password form signs nobody in as them.
	pw := n.browser()
	pw.get("/login")
	pw.post("/login", url.Values{"email": {"new@example.com"}, "password": {""}}).want(t, http.StatusUnauthorized)
}

// SSO needs the public URL (where the provider sends people back to).
func TestSSONeedsThePublicURL(t *testing.T) {
	_, err := panel.New(panel.Options{Key: testKey, SSO: &panel.SSOOptions{Issuer: "https://idp.example.com", ClientID: "x"}})
	if err == nil || !strings.Contains(err.Error(), "public URL") {
		t.Fatalf("without a public URL: %v", err)
	}
}
