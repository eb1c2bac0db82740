package panel

import (
	"context"
	"crypto/hmac"
	"errors"
	"net/http"
	"time"

	"lookout/control/admin"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// An invitation link, /invite/{token}, is public: the link's secret is
// the proof. Its page names the e-mail and role and takes a password (or
// offers single sign-on as that e-mail, sso.go); accepting makes the user
// once (the state machine deletes the invite in the same command) and
// signs them in. Its form carries a CSRF token like the sign-in form's.

type inviteView struct {
	baseView
	Token string
	// Invite is what the link invites to; nil when the link does not
	// work (Error says why).
	Invite *admin.Invite
	Error  string
	// SSO: the node has single sign-on, offered instead of a password.
	SSO bool
}

// invitePage is the invitation of the request's link: the page that says
// why it does not work otherwise (404 unknown or spent, 410 expired).
func (p *Panel) invitePage(w http.ResponseWriter, r *http.Request) (*admin.Invite, bool) {
	inv, _, err := p.o.Admin.InviteByToken(r.PathValue("token"))
	if err == nil {
		return inv, true
	}
	var e *admin.Error
	switch {
	case errors.As(err, &e) && e.Code == admin.CodeInviteExpired:
		p.renderInvite(w, r, http.StatusGone, inviteView{Error: "This invitation has expired. Ask an owner of the account for a new one."})
	case errors.As(err, &e) && e.Status == http.StatusNotFound:
		p.renderInvite(w, r, http.StatusNotFound, inviteView{Error: "This invitation link does not work: it was used, revoked or replaced by a newer one."})
	default:
		p.internal(w, r, err)
	}
	return nil, false
}

func (p *Panel) renderInvite(w http.ResponseWriter, r *http.Request, status int, v inviteView) {
	nonce := randomHex(16)
	http.SetCookie(w, p.cookie(loginCookie, nonce, p.now().Add(time.Hour)))
	v.Title, v.CSRF, v.Token, v.SSO = "Invitation", p.mac("login", nonce)[:32], r.PathValue("token"), p.sso != nil
	w.Header().Set("Cache-Control", "no-store")
	p.render(w, r, status, "invite", &v)
}

// handleInvitePage serves GET /invite/{token}.
func (p *Panel) handleInvitePage(w http.ResponseWriter, r *http.Request) {
	p.refresh(r)
	if inv, ok := p.invitePage(w, r); ok {
		p.renderInvite(w, r, http.StatusOK, inviteView{Invite: inv})
	}
}

// handleAcceptInvite serves POST /invite/{token}: password and confirm.
// The new user is signed in and sent to the monitors.
func (p *Panel) handleAcceptInvite(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	password := r.PostFormValue("password")
	c, err := r.Cookie(loginCookie)
	if err != nil || !hmac.Equal([]byte(r.PostFormValue(csrfField)), []byte(p.mac("login", c.Value)[:32])) {
		if inv, ok := p.invitePage(w, r); ok {
			p.renderInvite(w, r, http.StatusForbidden, inviteView{Invite: inv, Error: "The form expired. Please try again."})
		}
		return
	}
	p.refresh(r)
	inv, ok := p.invitePage(w, r)
	if !ok {
		return
	}
	if password != r.PostFormValue("confirm") {
		p.renderInvite(w, r, http.StatusUnprocessableEntity, inviteView{Invite: inv, Error: "The two passwords differ."})
		return
	}
	u, err := p.o.Admin.AcceptInvite(r.Context(), r.PathValue("token"), "", password)
	if err != nil {
		if msg, ok := refusal(err); ok {
			p.renderInvite(w, r, refusalStatus(err), inviteView{Invite: inv, Error: msg})
			return
		}
		p.unavailable(w, r, err)
		return
	}
	p.signInAs(w, r, u, "/", "invite")
}

// signInAs gives u a session and sends them to next, once this node has
// applied the command that made or changed u (so that the next request,
// here, finds the user), and once the sign-in (by method: invite or oidc)
// is in the audit log.
func (p *Panel) signInAs(w http.ResponseWriter, r *http.Request, u *statev1.User, next, method string) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := p.recordSignIn(ctx, u, method); err != nil {
		p.log.Warn("sign-in not recorded", "error", err)
		w.Header().Set("Retry-After", "1")
		p.errorPage(w, r, http.StatusServiceUnavailable, "Signing in needs the cluster, which cannot take changes right now (no leader). Try again shortly.")
		return
	}
	if err := p.o.Cluster.ConsistentRead(ctx); err != nil {
		p.log.Debug("signed in before this node applied the user", "error", err)
	}
	p.log.Debug("signed in", "account", u.GetAccountId(), "user", u.GetId())
	http.SetCookie(w, p.newSessionCookie(u))
	http.SetCookie(w, p.cookie(loginCookie, "", time.Time{}))
	http.Redirect(w, r, next, http.StatusSeeOther)
}
