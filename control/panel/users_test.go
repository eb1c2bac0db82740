package panel_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

var inviteLinkRe = regexp.MustCompile(`https://lookout\.example\.com/invite/(iv_[a-z2-7]+)`)

// invite makes an invitation as the owner and returns the link's token.
func (tm *team) invite(t *testing.T, email, role string) string {
	t.Helper()
	p := tm.owner.post("/users/invite", url.Values{"email": {email}, "role": {role}})
	p.want(t, http.StatusCreated, "Invitation for "+email)
	m := inviteLinkRe.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no invitation link in:\n%s", p.Body)
	}
	return m[1]
}

// Owners see the users, invite by a link shown once, and the invitee
// joins with the invite's role by setting a password; the link works
// once.
func TestInviteByLink(t *testing.T) {
	n := newNode(t)
	tm := newTeam(t, n)
	tm.owner.get("/users").want(t, http.StatusOK, "owner@example.com", "editor@example.com", "viewer@example.com", "new@example.com")

	token := tm.invite(t, "dev@example.com", "editor")
	if p := tm.owner.get("/users"); strings.Contains(p.Body, token) || !strings.Contains(p.Body, "dev@example.com") {
		t.Fatal("the link is shown again, or the invitation is not pending")
	}

	// Bad input: an e-mail that has a user, a role outside the three.
	tm.owner.post("/users/invite", url.Values{"email": {"Viewer@example.com"}, "role": {"viewer"}}).want(t, http.StatusConflict, "already has a user")
	tm.owner.post("/users/invite", url.Values{"email": {"x@example.com"}, "role": {"admin"}}).want(t, http.StatusBadRequest, "must be owner, editor or viewer")

	// The invitee follows the link.
	b := n.browser()
	b.get("/invite/"+token).want(t, http.StatusOK, "dev@example.com", "editor")
	b.post("/invite/"+token, url.Values{"password": {"a long password"}, "confirm": {"another one"}}).want(t, http.StatusUnprocessableEntity, "differ")
	b.post("/invite/"+token, url.Values{"password": {"short"}, "confirm": {"short"}}).want(t, http.StatusBadRequest, "at least 8 characters")
	b.post("/invite/"+token, url.Values{"password": {"a long password"}, "confirm": {"a long password"}, "csrf": {"forged"}}).want(t, http.StatusForbidden)
	b.get("/invite/" + token)
	p := b.post("/invite/"+token, url.Values{"password": {"a long password"}, "confirm": {"a long password"}})
	if p.Status != http.StatusSeeOther || p.Location != "/" {
		t.Fatalf("accept: %d %q %s", p.Status, p.Location, p.Body)
	}
	b.get("/").want(t, http.StatusOK, "dev@example.com", `href="/monitors/new"`)
	// And signs in with the password later.
	again := n.browser()
	again.signIn(account{Email: "DEV@example.com", Password: "a long password"})

	// The link works once.
	other := n.browser()
	other.get("/invite/"+token).want(t, http.StatusNotFound, "does not work")
	other.post("/invite/"+token, url.Values{"password": {"a long password"}, "confirm": {"a long password"}}).want(t, http.StatusNotFound)
	other.get("/invite/iv_nosuchlink").want(t, http.StatusNotFound)

	// A revoked link stops working.
	revoked := tm.invite(t, "gone@example.com", "viewer")
	invites, err := n.Admin.Invites(tm.acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range invites {
		if inv.Email == "gone@example.com" {
			tm.owner.post("/users/invites/"+inv.ID+"/revoke", nil)
		}
	}
	other.get("/invite/"+revoked).want(t, http.StatusNotFound)
}

// A link expires 7 days after it was made.
func TestAnExpiredInviteIsRefused(t *testing.T) {
	n := newNode(t)
	tm := newTeam(t, n)
	token := tm.invite(t, "late@example.com", "viewer")
	b := n.browser()
	b.get("/invite/"+token).want(t, http.StatusOK)
	n.advance(7*24*time.Hour + time.Second)
	b.get("/invite/"+token).want(t, http.StatusGone, "expired")
	b.post("/invite/"+token, url.Values{"password": {"a long password"}, "confirm": {"a long password"}}).want(t, http.StatusGone)
	if _, err := n.Store.UserByEmail("late@example.com"); err == nil {
		t.Fatal("an expired invitation made a user")
	}
}

// Owners change roles and remove users: a new role counts at the user's
// next request, a removed user's session ends at once; the last owner can
// neither be demoted nor removed.
func TestOwnersChangeAndRemoveUsers(t *testing.T) {
	n := newNode(t)
	tm := newTeam(t, n)
	id := tm.viewerID

	tm.viewer.post("/monitors/"+tm.ids["uuid"]+"/delete", url.Values{"confirm_name": {"backup"}}).want(t, http.StatusForbidden, roleRefusal)
	tm.owner.get("/users")
	if p := tm.owner.post("/users/"+id+"/role", url.Values{"role": {"editor"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("role: %d %s", p.Status, p.Body)
	}
	tm.viewer.get("/").want(t, http.StatusOK, `href="/monitors/new"`)
	tm.owner.get("/users")
	tm.owner.post("/users/"+id+"/role", url.Values{"role": {"root"}}).want(t, http.StatusBadRequest, "must be owner, editor or viewer")

	// The last owner stays.
	tm.owner.post("/users/"+tm.acct.ID+"/role", url.Values{"role": {"viewer"}}).want(t, http.StatusConflict, "last owner")
	tm.owner.get("/users")
	tm.owner.post("/users/"+tm.acct.ID+"/remove", url.Values{"confirm": {"yes"}}).want(t, http.StatusConflict, "last owner")

	// Removing asks first; then the user's session ends.
	tm.owner.get("/users")
	tm.owner.post("/users/"+id+"/remove", nil).want(t, http.StatusUnprocessableEntity, "Remove viewer@example.com?")
	if p := tm.owner.post("/users/"+id+"/remove", url.Values{"confirm": {"yes"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("remove: %d %s", p.Status, p.Body)
	}
	if p := tm.viewer.get("/"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location, "/login") {
		t.Fatalf("a removed user's session: %d %q", p.Status, p.Location)
	}
	tm.owner.get("/users")
	tm.owner.post("/users/"+id+"/remove", url.Values{"confirm": {"yes"}}).want(t, http.StatusNotFound)

	// With another owner, an owner may leave, and is signed out.
	tm.owner.get("/users")
	editor, err := n.Store.UserByEmail("editor@example.com")
	if err != nil {
		t.Fatal(err)
	}
	tm.owner.post("/users/"+editor.GetId()+"/role", url.Values{"role": {"owner"}})
	tm.owner.get("/users")
	if p := tm.owner.post("/users/"+tm.acct.ID+"/remove", url.Values{"confirm": {"yes"}}); p.Status != http.StatusSeeOther || p.Location != "/login" {
		t.Fatalf("an owner removing themself: %d %q", p.Status, p.Location)
	}
	tm.editor.get("/users").want(t, http.StatusOK, "editor@example.com")
}
