package panel

import (
	"context"
	"crypto/hmac"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"lookout/control/admin"
	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Single sign-on with an OpenID Connect provider (the company's SSO):
// the authorization code flow with PKCE. GET /login/sso keeps a random
// state, nonce and PKCE verifier in a short-lived cookie signed with the
// panel key (as the sign-in form's CSRF cookie is), so the flow may come
// back to any node, and sends the browser to the provider; the callback
// checks the state against the cookie, exchanges the code with the
// verifier, verifies the ID token (signature by the provider's published
// keys, issuer, audience = the client id, expiry) and its nonce, and
// signs in the user whose e-mail the token names, if the provider
// verified it (email_verified). An e-mail without a user is refused,
// unless the flow started from an invitation link for that e-mail, which
// it then accepts.

// SSOOptions configures single sign-on (lookout control --oidc-*).
type SSOOptions struct {
	// Issuer is the provider's issuer URL; its discovery document is read
	// from Issuer/.well-known/openid-configuration at the first sign-in.
	Issuer       string
	ClientID     string
	ClientSecret string
	// AllowedDomains, when not empty, are the only e-mail domains that
	// may sign in with SSO (any case).
	AllowedDomains []string
	// HTTPClient reaches the provider (default: a 10 s timeout).
	HTTPClient *http.Client
}

const (
	ssoCookie = "lookout_sso"
	// maxInviteToken bounds the invitation secret a flow carries (an
	// iv_ secret is 55 characters), so that the cookie stays small.
	maxInviteToken = 128
	// ssoFlowTTL bounds the time from leaving for the provider to coming
	// back.
	ssoFlowTTL = 10 * time.Minute
)

// sso is the panel's client of the provider.
type sso struct {
	o        SSOOptions
	redirect string
	now      func() time.Time

	mu       sync.Mutex
	provider *oidc.Provider // discovered at first use, then kept
}

func newSSO(o SSOOptions, publicURL string, now func() time.Time) (*sso, error) {
	if o.Issuer == "" || o.ClientID == "" {
		return nil, errors.New("panel: single sign-on needs the issuer and the client id")
	}
	if publicURL == "" {
		return nil, errors.New("panel: single sign-on needs the public URL (--public-url) for the provider to send people back to")
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	for i, d := range o.AllowedDomains {
		o.AllowedDomains[i] = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "@"))
	}
	return &sso{o: o, redirect: strings.TrimRight(publicURL, "/") + "/login/sso/callback", now: now}, nil
}

// discover reads the provider's discovery document once; a failure is
// tried again at the next sign-in, so a provider that was down when the
// node started does not need a restart.
func (s *sso) discover(ctx context.Context) (*oidc.Provider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provider != nil {
		return s.provider, nil
	}
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, s.o.HTTPClient), s.o.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discover the provider %s: %w", s.o.Issuer, err)
	}
	s.provider = p
	return p, nil
}

func (s *sso) config(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: s.o.ClientID, ClientSecret: s.o.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: s.redirect, Scopes: []string{oidc.ScopeOpenID, "email"}}
}

// domainAllowed tells whether email may sign in by the domain rule.
func (s *sso) domainAllowed(email string) bool {
	if len(s.o.AllowedDomains) == 0 {
		return true
	}
	at := strings.LastIndexByte(email, '@')
	domain := strings.ToLower(email[at+1:])
	for _, d := range s.o.AllowedDomains {
		if domain == d {
			return true
		}
	}
	return false
}

// ssoFlow is what the flow's cookie keeps between leaving for the
// provider and coming back.
type ssoFlow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Next     string `json:"x,omitempty"`
	Invite   string `json:"i,omitempty"`
	Expires  int64  `json:"e"`
}

func (p *Panel) flowCookie(f ssoFlow) *http.Cookie {
	raw, _ := json.Marshal(f)
	enc := base64.RawURLEncoding.EncodeToString(raw)
	return p.cookie(ssoCookie, enc+"."+p.mac("sso", enc), time.Unix(f.Expires, 0))
}

// readFlow checks and decodes the flow's cookie.
func (p *Panel) readFlow(r *http.Request) (*ssoFlow, bool) {
	c, err := r.Cookie(ssoCookie)
	if err != nil {
		return nil, false
	}
	enc, sig, ok := strings.Cut(c.Value, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(p.mac("sso", enc))) {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	var f ssoFlow
	if err != nil || json.Unmarshal(raw, &f) != nil || p.now().Unix() >= f.Expires || f.State == "" {
		return nil, false
	}
	return &f, true
}

// handleSSO serves GET /login/sso[?next=/path][&invite=TOKEN]: off to the
// provider.
func (p *Panel) handleSSO(w http.ResponseWriter, r *http.Request) {
	prov, err := p.sso.discover(r.Context())
	if err != nil {
		p.log.Warn("single sign-on unavailable", "error", err)
		p.renderLogin(w, r, http.StatusBadGateway, loginView{Next: "/", Error: "Single sign-on is unavailable right now: the identity provider did not answer. Try again shortly."})
		return
	}
	f := ssoFlow{State: randomHex(16), Nonce: randomHex(16), Verifier: oauth2.GenerateVerifier(),
		Next: safeNext(r.URL.Query().Get("next")), Expires: p.now().Add(ssoFlowTTL).Unix()}
	if inv := r.URL.Query().Get("invite"); len(inv) <= maxInviteToken {
		f.Invite = inv
	}
	if len(f.Next) > maxInviteToken*8 {
		f.Next = "/"
	}
	http.SetCookie(w, p.flowCookie(f))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, p.sso.config(prov).AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusSeeOther)
}

// ssoRefusal is a sign-in with SSO that did not work: the status, what
// the person reads, and what the log says.
type ssoRefusal struct {
	status   int
	message  string
	logged   string
	loggedKV []any
}

func refuseSSO(status int, message, logged string, kv ...any) *ssoRefusal {
	return &ssoRefusal{status, message, logged, kv}
}

// handleSSOCallback serves GET /login/sso/callback?code=&state=: the
// provider sends the browser back here.
func (p *Panel) handleSSOCallback(w http.ResponseWriter, r *http.Request) {
	f, ok := p.readFlow(r)
	http.SetCookie(w, p.cookie(ssoCookie, "", time.Time{}))
	if !ok || !hmac.Equal([]byte(r.URL.Query().Get("state")), []byte(f.State)) {
		p.renderLogin(w, r, http.StatusForbidden, loginView{Next: "/", Error: "The single sign-on did not start here, or took too long. Please try again."})
		return
	}
	u, refused := p.ssoUser(r, f)
	if refused != nil {
		p.log.Info("single sign-on refused", append([]any{"reason", refused.logged}, refused.loggedKV...)...)
		p.renderLogin(w, r, refused.status, loginView{Next: f.Next, Error: refused.message})
		return
	}
	p.signInAs(w, r, u, f.Next, "oidc")
}

// ssoUser finishes the flow: the user the provider signed in, or why not.
func (p *Panel) ssoUser(r *http.Request, f *ssoFlow) (*statev1.User, *ssoRefusal) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return nil, refuseSSO(http.StatusUnauthorized, "The identity provider did not sign you in ("+e+").", "provider error", "error", e, "description", q.Get("error_description"))
	}
	p.refresh(r) // the user or the invitation may be newer than this node's copy
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	ctx = oidc.ClientContext(ctx, p.sso.o.HTTPClient)
	prov, err := p.sso.discover(ctx)
	if err != nil {
		return nil, refuseSSO(http.StatusBadGateway, "The identity provider did not answer. Try again shortly.", "discovery", "error", err)
	}
	tok, err := p.sso.config(prov).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return nil, refuseSSO(http.StatusUnauthorized, "The identity provider refused the sign-in. Please try again.", "token exchange", "error", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, refuseSSO(http.StatusUnauthorized, "The identity provider sent no ID token.", "no id_token")
	}
	idt, err := prov.Verifier(&oidc.Config{ClientID: p.sso.o.ClientID, Now: p.now}).Verify(ctx, raw)
	if err != nil {
		return nil, refuseSSO(http.StatusUnauthorized, "The identity provider's answer could not be verified.", "id token", "error", err)
	}
	if !hmac.Equal([]byte(idt.Nonce), []byte(f.Nonce)) {
		return nil, refuseSSO(http.StatusUnauthorized, "The identity provider's answer was not for this sign-in. Please try again.", "nonce mismatch")
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil {
		return nil, refuseSSO(http.StatusUnauthorized, "The identity provider's answer could not be read.", "claims", "error", err)
	}
	verified := claims.EmailVerified == true || claims.EmailVerified == "true"
	if claims.Email == "" || !strings.Contains(claims.Email, "@") || !verified {
		return nil, refuseSSO(http.StatusForbidden, "Your identity provider has not verified your e-mail address, so it cannot sign you in here.", "e-mail not verified", "email", claims.Email)
	}
	if !p.sso.domainAllowed(claims.Email) {
		return nil, refuseSSO(http.StatusForbidden, "Single sign-on is not open to "+claims.Email+"'s domain on this service.", "domain not allowed", "email", claims.Email)
	}
	u, err := p.o.State.UserByEmail(claims.Email)
	if err == nil {
		return u, nil
	}
	if !errors.Is(err, state.ErrNotFound) {
		return nil, refuseSSO(http.StatusInternalServerError, "Something went wrong on our side; the error is in the node's log.", "read user", "error", err)
	}
	if f.Invite == "" {
		return nil, refuseSSO(http.StatusForbidden, claims.Email+" has no user here. Ask an owner of your Lookout account for an invitation.", "unknown e-mail", "email", claims.Email)
	}
	u, err = p.o.Admin.AcceptInvite(r.Context(), f.Invite, claims.Email, "")
	var e *admin.Error
	switch {
	case err == nil:
		return u, nil
	case errors.As(err, &e) && e.Code == admin.CodeInviteMismatch:
		return nil, refuseSSO(http.StatusForbidden, "This invitation is for another e-mail address than "+claims.Email+", the one your identity provider signed you in as.", "invite for another e-mail", "email", claims.Email)
	case errors.As(err, &e) && e.Status < 500:
		msg, _ := refusal(err)
		return nil, refuseSSO(e.Status, msg, "invite refused", "code", e.Code)
	}
	return nil, refuseSSO(http.StatusServiceUnavailable, "The cluster cannot take changes right now (no leader). Try again shortly.", "accept invite", "error", err)
}
