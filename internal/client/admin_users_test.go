package client_test

import (
	"context"
	"errors"
	"testing"

	"lookout/internal/client"
)

func TestUsers(t *testing.T) {
	ctx := context.Background()
	c, srv := newAdmin(t)
	acct, err := c.CreateAccount(ctx, client.CreateAccountRequest{Email: "ops@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.AddUser(ctx, acct.ID, client.AddUserRequest{Email: "sso@example.com", Role: "viewer"})
	if err != nil || u.Role != "viewer" || u.PasswordSet || !u.CreatedAt.Equal(srv.Now) {
		t.Fatalf("added: %+v %v", u, err)
	}
	users, err := c.ListUsers(ctx, acct.ID, true)
	if err != nil || len(users) != 2 || users[0].ID != acct.ID || users[1].ID != u.ID {
		t.Fatalf("list: %+v %v", users, err)
	}
	if u, err = c.UpdateUser(ctx, acct.ID, u.ID, client.UpdateUserRequest{Role: ptr("owner"), Password: ptr("a long password")}); err != nil || u.Role != "owner" || !u.PasswordSet {
		t.Fatalf("updated: %+v %v", u, err)
	}
	if err := c.RemoveUser(ctx, acct.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	var apiErr *client.APIError
	if err := c.RemoveUser(ctx, acct.ID, acct.ID); !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Code != "last_owner" {
		t.Fatalf("removing the last owner: %v", err)
	}
}
