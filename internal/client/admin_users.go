package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// User is a user of an account: who signs in to its panel, with a role.
type User struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	// Role is owner, editor or viewer.
	Role string `json:"role"`
	// PasswordSet: the user can sign in with a password (without one,
	// only with single sign-on).
	PasswordSet bool      `json:"password_set"`
	CreatedAt   time.Time `json:"created_at"`
}

// AddUserRequest is the body of POST /admin/v1/accounts/{id}/users. An
// empty Password is left out: the user signs in with single sign-on, or
// gets one later.
type AddUserRequest struct {
	Email    string `json:"email"`
	Role     string `json:"role"`
	Password string `json:"password,omitempty"`
}

// UpdateUserRequest changes the fields that are not nil; a Password of ""
// removes the password.
type UpdateUserRequest struct {
	Role     *string `json:"role,omitempty"`
	Password *string `json:"password,omitempty"`
}

func usersPath(accountID string) string {
	return "/admin/v1/accounts/" + url.PathEscape(accountID) + "/users"
}

// AddUser adds a user to an account.
func (a *Admin) AddUser(ctx context.Context, accountID string, req AddUserRequest) (*User, error) {
	var out User
	if err := a.t.do(ctx, http.MethodPost, usersPath(accountID), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListUsers returns an account's users, owners first. A stale read
// answers from the node's own copy.
func (a *Admin) ListUsers(ctx context.Context, accountID string, stale bool) ([]User, error) {
	path := usersPath(accountID)
	if stale {
		path += "?stale=true"
	}
	var out struct {
		Users []User `json:"users"`
	}
	if err := a.t.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return out.Users, nil
}

// UpdateUser changes a user's role or password and returns the user.
func (a *Admin) UpdateUser(ctx context.Context, accountID, userID string, req UpdateUserRequest) (*User, error) {
	var out User
	if err := a.t.do(ctx, http.MethodPut, usersPath(accountID)+"/"+url.PathEscape(userID), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RemoveUser removes a user; its panel sessions end on every node.
func (a *Admin) RemoveUser(ctx context.Context, accountID, userID string) error {
	return a.t.do(ctx, http.MethodDelete, usersPath(accountID)+"/"+url.PathEscape(userID), nil, nil)
}
