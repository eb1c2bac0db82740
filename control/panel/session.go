package panel

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"lookout/control/audit"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Sessions are signed cookies, not server-side records: the cookie holds
// the account id, the expiry, a tag of the account's password hash and a
// random nonce, signed with HMAC-SHA256 under the panel key every node
// derives from the cluster secret (cluster.PanelKey). So every node
// accepts every session without a record of it, and a failover signs
// nobody out; a sign-in writes only its entry in the audit log
// (recordSignIn). Changing the password changes the tag and ends every
// session of the account. Signing out is the other raft write: EndSession
// records the session's nonce (its id) until the session would have
// expired, and every node refuses a cookie whose nonce it holds, so a
// copy of the cookie stops working everywhere too.
//
// CSRF: every form carries a token. Signed in, it is an HMAC of the
// session's nonce; on the sign-in form (no session yet) it is an HMAC of a
// random nonce kept in a short-lived cookie (double submit, signed).

const (
	sessionCookie = "lookout_session"
	loginCookie   = "lookout_login"
	csrfField     = "csrf"
	// maxFormBytes bounds a form (a group's channels are at most 256 KiB).
	maxFormBytes = 512 << 10
)

// session is a signed-in visitor.
type session struct {
	AccountID string
	Email     string
	Expires   time.Time
	nonce     string
	// CSRF is the token the session's forms carry.
	CSRF string
}

type ctxKey struct{}

// sessionFrom returns the session signedIn put in ctx.
func sessionFrom(ctx context.Context) *session { return ctx.Value(ctxKey{}).(*session) }

// mac is the hex HMAC-SHA256 of the parts under the panel key.
func (p *Panel) mac(parts ...string) string {
	h := hmac.New(sha256.New, p.o.Key)
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// passwordTag ties a session to the password it was signed in with.
func (p *Panel) passwordTag(acct *statev1.Account) string {
	return p.mac("password", string(acct.GetPasswordHash()))[:16]
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// newSessionCookie signs a session of acct from now.
func (p *Panel) newSessionCookie(acct *statev1.Account) *http.Cookie {
	exp := p.now().Add(p.o.SessionTTL)
	payload := strings.Join([]string{"v1", acct.GetId(), strconv.FormatInt(exp.Unix(), 10), p.passwordTag(acct), randomHex(16)}, ".")
	value := base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + p.mac("session", payload)
	return p.cookie(sessionCookie, value, exp)
}

// cookie is an HttpOnly, SameSite=Lax cookie for the whole panel, Secure
// when the node serves HTTPS; a zero expiry deletes it.
func (p *Panel) cookie(name, value string, exp time.Time) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: p.o.Secure, SameSite: http.SameSiteLaxMode}
	if exp.IsZero() {
		c.MaxAge = -1
	} else {
		c.Expires = exp
	}
	return c
}

var errNoSession = errors.New("no valid session")

// readSession checks the session cookie of r: its signature, its expiry,
// its account, the account's password, and that it was not signed out.
func (p *Panel) readSession(r *http.Request) (*session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, errNoSession
	}
	enc, sig, ok := strings.Cut(c.Value, ".")
	if !ok {
		return nil, errNoSession
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return nil, errNoSession
	}
	payload := string(raw)
	if !hmac.Equal([]byte(sig), []byte(p.mac("session", payload))) {
		return nil, errNoSession
	}
	f := strings.Split(payload, ".")
	if len(f) != 5 || f[0] != "v1" {
		return nil, errNoSession
	}
	exp, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || p.now().Unix() >= exp {
		return nil, errNoSession
	}
	acct, err := p.o.State.Account(f[1])
	if err != nil || len(acct.GetPasswordHash()) == 0 || !hmac.Equal([]byte(f[3]), []byte(p.passwordTag(acct))) {
		return nil, errNoSession
	}
	if ended, err := p.o.State.SessionEnded(f[4]); err != nil || ended {
		return nil, errNoSession
	}
	return &session{AccountID: f[1], Email: acct.GetEmail(), Expires: time.Unix(exp, 0), nonce: f[4], CSRF: p.mac("csrf", f[1], f[4])[:32]}, nil
}

// signedIn runs h for a signed-in visitor whose unsafe requests carry the
// session's CSRF token, with the session in its context and its user as
// the actor of the changes it makes (sessionActor); others are sent to
// /login (a page) or answered 401 (a stream) or 403 (a form without the
// right token).
func (p *Panel) signedIn(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := p.readSession(r)
		if err != nil {
			if r.Method == http.MethodGet && r.Header.Get("Accept") != "text/event-stream" {
				http.Redirect(w, r, "/login?next="+urlQueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			p.errorPage(w, r, http.StatusUnauthorized, "Please sign in again.")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if !hmac.Equal([]byte(r.PostFormValue(csrfField)), []byte(s.CSRF)) {
				p.errorPage(w, r, http.StatusForbidden, "This form has expired or did not come from this panel. Go back, reload the page and try again.")
				return
			}
		}
		ctx := audit.WithActor(context.WithValue(r.Context(), ctxKey{}, s), sessionActor(s))
		h(w, r.WithContext(ctx))
	}
}
