package panel

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"lookout/control/admin"
	"lookout/control/state"
)

// The users page (owners only, routes.go): the account's users with their
// roles, a form to invite someone by link, the pending invitations. The
// writes are the operator API's own calls (admin.API), so the rules (an
// e-mail has one user, an account keeps an owner) are checked in one place.

type usersView struct {
	baseView
	Users   []admin.User
	Invites []admin.Invite
	// Remove is the user whose removal the page asks to confirm.
	Remove *admin.User
	// Link is the invitation link just made: shown this once.
	Link    string
	Invited *admin.InviteCreated
	// Error is a refusal of the invite form; UserError of a user's row.
	Error, UserError string
	// Form is what the invite form had, kept after a refusal.
	FormEmail, FormRole string
	// Self is the signed-in user's id.
	Self  string
	Roles []string
}

// handleUsers serves GET /users[?remove=ID].
func (p *Panel) handleUsers(w http.ResponseWriter, r *http.Request) {
	p.showUsers(w, r, http.StatusOK, &usersView{}, r.URL.Query().Get("remove"))
}

// showUsers renders the users page; remove, when not empty, is the id of
// the user whose removal to confirm (404 when the account has none).
func (p *Panel) showUsers(w http.ResponseWriter, r *http.Request, status int, v *usersView, remove string) {
	s := sessionFrom(r.Context())
	v.Stale = p.refresh(r)
	users, err := p.o.Admin.Users(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	invites, err := p.o.Admin.Invites(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	v.Users, v.Invites = users, invites
	for i := range users {
		if users[i].ID == remove {
			v.Remove = &users[i]
		}
	}
	if remove != "" && v.Remove == nil {
		p.notFound(w, r)
		return
	}
	if v.FormRole == "" {
		v.FormRole = state.RoleViewer
	}
	v.Self, v.Roles = s.UserID, []string{state.RoleViewer, state.RoleEditor, state.RoleOwner}
	v.Title, v.Nav, v.CSRF, v.Account = "Users", "users", s.CSRF, s.Email
	w.Header().Set("Cache-Control", "no-store")
	p.render(w, r, status, "users", v)
}

// refusalStatus is the status of an operator API refusal shown on a page:
// its own (400, 404, 409), 422 for a too large one.
func refusalStatus(err error) int {
	var e *admin.Error
	if errors.As(err, &e) && e.Status < 500 && e.Status != http.StatusRequestEntityTooLarge {
		return e.Status
	}
	return http.StatusUnprocessableEntity
}

// handleInvite serves POST /users/invite: email and role. The answer shows
// the link once; only its secret's SHA-256 is stored.
func (p *Panel) handleInvite(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	email, role := strings.TrimSpace(r.PostFormValue("email")), r.PostFormValue("role")
	inv, err := p.o.Admin.CreateInvite(r.Context(), s.AccountID, s.UserID, email, role)
	if err != nil {
		if msg, ok := refusal(err); ok {
			p.showUsers(w, r, refusalStatus(err), &usersView{Error: msg, FormEmail: email, FormRole: role}, "")
			return
		}
		p.unavailable(w, r, err)
		return
	}
	p.showUsers(w, r, http.StatusCreated, &usersView{Invited: inv, Link: p.publicURL(r) + "/invite/" + inv.Token}, "")
}

// handleSetRole serves POST /users/{id}/role: role. Taking the owner role
// from the last owner is refused (409).
func (p *Panel) handleSetRole(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	role := r.PostFormValue("role")
	if err := p.o.Admin.UpdateUser(r.Context(), s.AccountID, r.PathValue("id"), admin.UserUpdate{Role: &role}); err != nil {
		p.userRefused(w, r, err)
		return
	}
	http.Redirect(w, r, "/users", http.StatusSeeOther)
}

// handleRemoveUser serves POST /users/{id}/remove: the user is removed
// only when the form confirms it (confirm=yes, sent by the confirmation
// GET /users?remove=ID shows); without, that confirmation is shown (422).
// The user's sessions end on every node. An owner who removes themself is
// signed out with it.
func (p *Panel) handleRemoveUser(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	id := r.PathValue("id")
	if r.PostFormValue("confirm") != "yes" {
		p.showUsers(w, r, http.StatusUnprocessableEntity, &usersView{}, id)
		return
	}
	if err := p.o.Admin.RemoveUser(r.Context(), s.AccountID, id); err != nil {
		p.userRefused(w, r, err)
		return
	}
	if id == s.UserID {
		http.SetCookie(w, p.cookie(sessionCookie, "", time.Time{}))
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/users", http.StatusSeeOther)
}

// handleRevokeInvite serves POST /users/invites/{id}/revoke: the link
// stops working.
func (p *Panel) handleRevokeInvite(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	if err := p.o.Admin.RevokeInvite(r.Context(), s.AccountID, r.PathValue("id")); err != nil {
		p.userRefused(w, r, err)
		return
	}
	http.Redirect(w, r, "/users", http.StatusSeeOther)
}

// userRefused answers a refused change of a user or an invitation: the
// page with the reason (404 for one the account does not have), or 503.
func (p *Panel) userRefused(w http.ResponseWriter, r *http.Request, err error) {
	var e *admin.Error
	if errors.As(err, &e) && e.Status == http.StatusNotFound {
		p.notFound(w, r)
		return
	}
	if msg, ok := refusal(err); ok {
		p.showUsers(w, r, refusalStatus(err), &usersView{UserError: msg}, "")
		return
	}
	p.unavailable(w, r, err)
}
