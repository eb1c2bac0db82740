package cli

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"lookout/control/controltest"
)

// lookout admin account user add, list, role, password and remove call
// the operator API; refusals come back as errors with their codes.
func TestAdminUserCommands(t *testing.T) {
	srv := controltest.NewServer(t)
	var acct struct{ ID string }
	mustRunAdmin(t, srv, &acct, "account", "create", "--email", "owner@example.com")

	type user struct {
		ID, Email, Role string
		PasswordSet     bool `json:"password_set"`
	}
	var ed user
	mustRunAdmin(t, srv, &ed, "account", "user", "add", "--account", acct.ID, "--email", "ed@example.com", "--role", "editor", "--password", "editor password")
	if ed.ID == "" || ed.Role != "editor" || !ed.PasswordSet {
		t.Fatalf("added: %+v", ed)
	}
	var list struct{ Users []user }
	mustRunAdmin(t, srv, &list, "account", "user", "list", "--account", acct.ID)
	if len(list.Users) != 2 || list.Users[0].Email != "owner@example.com" || list.Users[0].Role != "owner" || list.Users[1].ID != ed.ID {
		t.Fatalf("list: %+v", list)
	}

	var got user
	mustRunAdmin(t, srv, &got, "account", "user", "role", "--account", acct.ID, ed.ID, "viewer")
	if got.Role != "viewer" {
		t.Fatalf("after role: %+v", got)
	}
	mustRunAdmin(t, srv, &got, "account", "user", "password", ed.ID, "--account", acct.ID, "--password", "a new password")
	if u, _ := srv.Store.User(acct.ID, ed.ID); bcrypt.CompareHashAndPassword(u.GetPasswordHash(), []byte("a new password")) != nil {
		t.Fatal("password not reset")
	}
	if _, err := runAdminTest(t, adminEnv(srv), "account", "user", "password", ed.ID, "--account", acct.ID); ExitCode(err) != 2 {
		t.Fatalf("password without --password: %v", err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"account", "user", "add", "--account", acct.ID, "--email", "x@example.com", "--role", "admin"}, "invalid field: role"},
		{[]string{"account", "user", "add", "--account", acct.ID, "--email", "ED@example.com", "--role", "viewer"}, "user_exists"},
		{[]string{"account", "user", "role", "--account", acct.ID, acct.ID, "editor"}, "last_owner"},
		{[]string{"account", "user", "remove", "--account", acct.ID, acct.ID}, "last_owner"},
	} {
		if _, err := runAdminTest(t, adminEnv(srv), tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if _, err := runAdminTest(t, adminEnv(srv), "account", "user", "list"); ExitCode(err) != 2 {
		t.Fatalf("list without --account: %v", err)
	}

	mustRunAdmin(t, srv, nil, "account", "user", "remove", "--account", acct.ID, ed.ID)
	mustRunAdmin(t, srv, &list, "account", "user", "list", "--account", acct.ID, "--stale")
	if len(list.Users) != 1 {
		t.Fatalf("after remove: %+v", list)
	}
}
