package admin_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"lookout/control/admin"
	"lookout/control/controltest"
)

type userJSON struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	Role        string `json:"role"`
	PasswordSet bool   `json:"password_set"`
	CreatedAt   string `json:"created_at"`
}

func listUsers(t *testing.T, srv *controltest.Server, acct string) []userJSON {
	t.Helper()
	r := do(t, srv, "GET", "/admin/v1/accounts/"+acct+"/users", "")
	r.wantStatus(t, http.StatusOK)
	var out struct{ Users []userJSON }
	r.decode(t, &out)
	return out.Users
}

// The operator adds users with a role and an optional password, lists
// them (the account's e-mail is the first owner), changes roles, resets
// passwords and removes users; bad input gets its code.
func TestUsersEndpoints(t *testing.T) {
	srv := controltest.NewServer(t)
	r := do(t, srv, "POST", "/admin/v1/accounts", `{"email":"owner@example.com","password":"owner password"}`)
	r.wantStatus(t, http.StatusCreated)
	var acct struct{ ID string }
	r.decode(t, &acct)
	base := "/admin/v1/accounts/" + acct.ID + "/users"

	if got := listUsers(t, srv, acct.ID); len(got) != 1 || got[0].ID != acct.ID || got[0].Email != "owner@example.com" || got[0].Role != "owner" || !got[0].PasswordSet {
		t.Fatalf("users of a new account: %+v", got)
	}

	r = do(t, srv, "POST", base, `{"email":"ed@example.com","password":"editor password","role":"editor"}`)
	r.wantStatus(t, http.StatusCreated)
	var ed userJSON
	r.decode(t, &ed)
	if ed.ID == "" || ed.Email != "ed@example.com" || ed.Role != "editor" || !ed.PasswordSet {
		t.Fatalf("added: %+v", ed)
	}
	if _, err := time.Parse(time.RFC3339, ed.CreatedAt); err != nil {
		t.Fatalf("created_at %q: %v", ed.CreatedAt, err)
	}
	u, err := srv.Store.UserByEmail("ed@example.com")
	if err != nil || bcrypt.CompareHashAndPassword(u.GetPasswordHash(), []byte("editor password")) != nil {
		t.Fatalf("stored user: %v %v", u, err)
	}
	do(t, srv, "POST", base, `{"email":"sso@example.com","role":"viewer"}`).wantStatus(t, http.StatusCreated)
	if got := listUsers(t, srv, acct.ID); len(got) != 3 || got[0].Email != "owner@example.com" || got[1].Email != "ed@example.com" ||
		got[2].Email != "sso@example.com" || got[2].PasswordSet {
		t.Fatalf("users: %+v", got)
	}

	// Bad input.
	do(t, srv, "POST", base, `{"email":"x@example.com","role":"admin"}`).wantError(t, 400, "invalid_request", "invalid field: role")
	do(t, srv, "POST", base, `{"email":"x@example.com"}`).wantError(t, 400, "invalid_request", "invalid field: role")
	do(t, srv, "POST", base, `{"email":"not an address","role":"viewer"}`).wantError(t, 400, "invalid_request", "invalid field: email")
	do(t, srv, "POST", base, `{"email":"x@example.com","role":"viewer","password":"short"}`).wantError(t, 400, "invalid_request", "invalid field: password")
	do(t, srv, "POST", base, `{"email":"x@example.com","role":"viewer","password":""}`).wantError(t, 400, "invalid_request", "invalid field: password")
	do(t, srv, "POST", base, `{"email":"ED@example.com","role":"viewer"}`).wantError(t, 409, "user_exists", "the e-mail")
	do(t, srv, "POST", base, `{"email":"owner@example.com","role":"viewer"}`).wantError(t, 409, "user_exists", "the e-mail")
	do(t, srv, "POST", "/admin/v1/accounts/nobody/users", `{"email":"x@example.com","role":"viewer"}`).wantError(t, 404, "not_found", "account nobody")
	do(t, srv, "GET", "/admin/v1/accounts/nobody/users", "").wantError(t, 404, "not_found", "account nobody")

	// Role changes and password resets; the answer is the user now.
	r = do(t, srv, "PUT", base+"/"+ed.ID, `{"role":"viewer"}`)
	r.wantStatus(t, http.StatusOK)
	var got userJSON
	r.decode(t, &got)
	if got.Role != "viewer" || !got.PasswordSet {
		t.Fatalf("after the role change: %+v", got)
	}
	do(t, srv, "PUT", base+"/"+ed.ID, `{"password":"a new password"}`).wantStatus(t, http.StatusOK)
	if u, _ := srv.Store.User(acct.ID, ed.ID); bcrypt.CompareHashAndPassword(u.GetPasswordHash(), []byte("a new password")) != nil {
		t.Fatal("password not reset")
	}
	r = do(t, srv, "PUT", base+"/"+ed.ID, `{"password":""}`)
	r.decode(t, &got)
	if got.PasswordSet {
		t.Fatal("password not removed")
	}
	do(t, srv, "GET", base+"/"+ed.ID, "").wantStatus(t, http.StatusOK)
	do(t, srv, "PUT", base+"/"+ed.ID, `{"role":"root"}`).wantError(t, 400, "invalid_request", "invalid field: role")
	do(t, srv, "PUT", base+"/"+ed.ID, `{}`).wantError(t, 400, "invalid_request", "invalid field: role")
	do(t, srv, "PUT", base+"/"+ed.ID, `{"password":"short"}`).wantError(t, 400, "invalid_request", "invalid field: password")
	do(t, srv, "PUT", base+"/nobody", `{"role":"viewer"}`).wantError(t, 404, "not_found", "user nobody")
	do(t, srv, "GET", base+"/nobody", "").wantError(t, 404, "not_found", "user nobody")

	// The last owner stays.
	do(t, srv, "PUT", base+"/"+acct.ID, `{"role":"editor"}`).wantError(t, 409, "last_owner", "owner@example.com is the account's last owner")
	do(t, srv, "DELETE", base+"/"+acct.ID, "").wantError(t, 409, "last_owner", "owner@example.com is the account's last owner")
	do(t, srv, "PUT", base+"/"+ed.ID, `{"role":"owner"}`).wantStatus(t, http.StatusOK)
	do(t, srv, "DELETE", base+"/"+acct.ID, "").wantStatus(t, http.StatusNoContent)
	do(t, srv, "DELETE", base+"/"+acct.ID, "").wantError(t, 404, "not_found", "user")
	if got := listUsers(t, srv, acct.ID); len(got) != 2 || got[0].ID != ed.ID || got[0].Role != "owner" {
		t.Fatalf("after the removal: %+v", got)
	}
	// The account's own password endpoint names its e-mail's user, who
	// is gone.
	do(t, srv, "PUT", "/admin/v1/accounts/"+acct.ID+"/password", `{"password":"new password"}`).wantError(t, 404, "not_found", "account")
}

// Invitations through the Go calls the panel uses: shown once, accepted
// once, by the invited e-mail only, not after they expire, not for an
// e-mail that has a user; revoked ones stop working.
func TestInvites(t *testing.T) {
	// The node's clock, and the leader's that stamps the commands.
	var skew, leaderSkew time.Duration
	now := func() time.Time { return time.Now().Add(skew) }
	store := controltest.OpenStore(t)
	c := controltest.NewCluster(store, func() time.Time { return time.Now().Add(leaderSkew) })
	ctx := context.Background()
	a := admin.New(admin.Options{Cluster: c, State: store, Token: controltest.Token, PasswordCost: bcrypt.MinCost, Now: now})
	acct, err := a.CreateAccount(ctx, admin.AccountRequest{Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	wantErr := func(err error, status int, code string) {
		t.Helper()
		e, ok := err.(*admin.Error)
		if !ok || e.Status != status || e.Code != code {
			t.Fatalf("error %v, want %d %s", err, status, code)
		}
	}
	inv, err := a.CreateInvite(ctx, acct.ID, acct.ID, " New@example.com ", "editor")
	if err != nil || len(inv.Token) < 40 || inv.Email != "New@example.com" || inv.Role != "editor" || inv.InvitedBy != acct.ID {
		t.Fatalf("invite: %+v %v", inv, err)
	}
	if list, _ := a.Invites(acct.ID); len(list) != 1 || list[0].ID != inv.ID {
		t.Fatalf("pending: %+v", list)
	}
	_, err = a.CreateInvite(ctx, acct.ID, acct.ID, "owner@example.com", "viewer")
	wantErr(err, 409, "user_exists")
	_, err = a.CreateInvite(ctx, acct.ID, acct.ID, "x@example.com", "boss")
	wantErr(err, 400, "invalid_request")

	_, err = a.AcceptInvite(ctx, inv.Token, "other@example.com", "")
	wantErr(err, 409, "invite_mismatch")
	_, err = a.AcceptInvite(ctx, inv.Token, "", "short")
	wantErr(err, 400, "invalid_request")
	_, err = a.AcceptInvite(ctx, "iv_nosuchtoken", "", "a password")
	wantErr(err, 404, "invite_not_found")
	u, err := a.AcceptInvite(ctx, inv.Token, "", "a password")
	if err != nil || u.GetEmail() != "New@example.com" || u.GetRole() != "editor" || u.GetAccountId() != acct.ID {
		t.Fatalf("accepted: %v %v", u, err)
	}
	_, err = a.AcceptInvite(ctx, inv.Token, "", "a password")
	wantErr(err, 404, "invite_not_found")

	// Expired: refused by the reading node, and by the state machine for
	// a node whose clock is behind.
	late, err := a.CreateInvite(ctx, acct.ID, acct.ID, "late@example.com", "viewer")
	if err != nil {
		t.Fatal(err)
	}
	leaderSkew = 7*24*time.Hour + time.Second
	_, err = a.AcceptInvite(ctx, late.Token, "", "a password")
	wantErr(err, 409, "invite_expired")
	skew = leaderSkew
	_, err = a.AcceptInvite(ctx, late.Token, "", "a password")
	wantErr(err, 409, "invite_expired")
	if list, _ := a.Invites(acct.ID); len(list) != 0 {
		t.Fatalf("expired invites listed: %+v", list)
	}
	skew, leaderSkew = 0, 0
	revoked, err := a.CreateInvite(ctx, acct.ID, acct.ID, "gone@example.com", "viewer")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.RevokeInvite(ctx, acct.ID, revoked.ID); err != nil {
		t.Fatal(err)
	}
	_, err = a.AcceptInvite(ctx, revoked.Token, "", "a password")
	wantErr(err, 404, "invite_not_found")
}
