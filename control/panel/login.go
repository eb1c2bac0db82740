package panel

import (
	"crypto/hmac"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"lookout/control/keyauth"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// newDummyHash makes the hash an unknown e-mail's password is compared
// with (Panel.dummyHash), at the cost of real ones.
func newDummyHash() []byte {
	h, err := bcrypt.GenerateFromPassword([]byte("lookout: no such account"), bcrypt.DefaultCost)
	if err != nil {
		panic("panel: bcrypt: " + err.Error()) // only for a password over 72 bytes
	}
	return h
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// safeNext is where to go after signing in: a path of this panel only.
// It must start with one '/' (not "//" or "/\", which browsers read as
// another host) and hold no control character (browsers drop a tab or a
// newline, so "/\t/evil.example" would become "//evil.example"); a live
// stream is no page to land on. Anything else goes to "/".
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") ||
		strings.ContainsFunc(next, unicode.IsControl) || !utf8.ValidString(next) ||
		strings.HasSuffix(strings.SplitN(next, "?", 2)[0], "/live") {
		return "/"
	}
	return next
}

type loginView struct {
	baseView
	Email, Next, Error string
	// SSO: the node offers single sign-on.
	SSO bool
}

// handleLoginPage serves GET /login: the form, with a fresh CSRF nonce in
// a short-lived cookie. A signed-in visitor goes straight on.
func (p *Panel) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if _, err := p.readSession(r); err == nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	p.renderLogin(w, r, http.StatusOK, loginView{Next: next})
}

func (p *Panel) renderLogin(w http.ResponseWriter, r *http.Request, status int, v loginView) {
	nonce := randomHex(16)
	http.SetCookie(w, p.cookie(loginCookie, nonce, p.now().Add(time.Hour)))
	v.Title, v.SSO = "Sign in", p.sso != nil
	v.CSRF = p.mac("login", nonce)[:32]
	p.render(w, r, status, "login", &v)
}

// handleLogin serves POST /login: a user's e-mail and password. Wrong ones are
// counted per client address; past the budget every attempt from the
// address is refused (429) until it refills, a right one included. The
// bcrypt comparison runs with no lock held (ratelimit.Throttle.Check). A
// sign-in is recorded in the account's audit log (recordSignIn) before its
// session cookie is set.
func (p *Panel) handleLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	email := strings.TrimSpace(r.PostFormValue("email"))
	password := r.PostFormValue("password")
	v := loginView{Email: email, Next: safeNext(r.PostFormValue("next"))}
	c, err := r.Cookie(loginCookie)
	if err != nil || !hmac.Equal([]byte(r.PostFormValue(csrfField)), []byte(p.mac("login", c.Value)[:32])) {
		v.Error = "The sign-in form expired. Please try again."
		p.renderLogin(w, r, http.StatusForbidden, v)
		return
	}
	var user *statev1.User
	var session *http.Cookie
	ok, wait := p.throttle.Check(keyauth.ClientAddr(r), p.now(), func() bool {
		u, err := p.o.State.UserByEmail(email)
		hash := u.GetPasswordHash()
		if err != nil || len(hash) == 0 {
			hash = p.dummyHash()
		}
		if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || err != nil || len(u.GetPasswordHash()) == 0 {
			return false
		}
		user, session = u, p.newSessionCookie(u)
		return true
	})
	switch {
	case wait > 0:
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
		v.Error = "Too many failed sign-ins from your address. Try again in " + strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))) + " seconds."
		p.renderLogin(w, r, http.StatusTooManyRequests, v)
		return
	case !ok:
		v.Error = "Wrong e-mail or password."
		p.renderLogin(w, r, http.StatusUnauthorized, v)
		return
	}
	// A sign-in is in the audit log before it counts: without a leader
	// nobody signs in unrecorded (503, as signing out).
	if err := p.recordSignIn(r.Context(), user, "password"); err != nil {
		p.log.Warn("sign-in not recorded", "error", err)
		w.Header().Set("Retry-After", "1")
		v.Error = "Signing in needs the cluster, which cannot take changes right now (no leader). Try again shortly."
		p.renderLogin(w, r, http.StatusServiceUnavailable, v)
		return
	}
	p.log.Debug("signed in", "account", user.GetAccountId(), "user", user.GetId())
	http.SetCookie(w, session)
	http.SetCookie(w, p.cookie(loginCookie, "", time.Time{}))
	http.Redirect(w, r, v.Next, http.StatusSeeOther)
}

// handleLogout serves POST /logout: the session is ended on every node
// (an EndSession command: a copy of the cookie is refused from then on)
// and the cookie cleared. Without a leader nothing is ended and the
// visitor stays signed in (503), so that a sign-out never only seems done.
func (p *Panel) handleLogout(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	res, err := p.o.Cluster.Apply(r.Context(), &raftv1.Command{Op: &raftv1.Command_EndSession{EndSession: &raftv1.EndSession{
		SessionId: s.nonce, AccountId: s.AccountID, ExpiresUnixMs: s.Expires.UnixMilli(),
	}}})
	if err != nil {
		p.log.Warn("sign-out failed", "error", err)
		w.Header().Set("Retry-After", "1")
		p.errorPage(w, r, http.StatusServiceUnavailable, "Signing out needs the cluster, which cannot take changes right now (no leader). You are still signed in; try again shortly.")
		return
	}
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		p.internal(w, r, errors.New(res.GetMessage()))
		return
	}
	p.log.Debug("signed out", "account", s.AccountID)
	http.SetCookie(w, p.cookie(sessionCookie, "", time.Time{}))
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
