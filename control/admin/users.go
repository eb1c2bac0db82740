package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// User is a user of an account as the operator API shows it: never its
// password hash.
type User struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	// Role is owner, editor or viewer.
	Role string `json:"role"`
	// PasswordSet: the user can sign in with a password (without one,
	// only with single sign-on).
	PasswordSet bool   `json:"password_set"`
	CreatedAt   string `json:"created_at"`
}

// UserFromProto is the operator API's view of a stored user.
func UserFromProto(u *statev1.User) User {
	return User{ID: u.GetId(), Email: u.GetEmail(), Role: u.GetRole(), PasswordSet: len(u.GetPasswordHash()) > 0,
		CreatedAt: utcSeconds(u.GetCreatedUnixMs())}
}

// UserRequest asks for a new user of an account. Password may be empty:
// the user signs in with single sign-on, or gets one later.
type UserRequest struct {
	Email    string
	Password string
	Role     string
}

// UserUpdate changes a user: the fields that are not nil. A Password of ""
// removes the password.
type UserUpdate struct {
	Role     *string
	Password *string
}

// userBody is the JSON of POST /admin/v1/accounts/{id}/users.
type userBody struct {
	Email    string  `json:"email"`
	Password *string `json:"password"`
	Role     string  `json:"role"`
}

// userUpdateBody is the JSON of PUT /admin/v1/accounts/{id}/users/{user_id}.
type userUpdateBody struct {
	Role     *string `json:"role"`
	Password *string `json:"password"`
}

// checkRole accepts the three role names.
func checkRole(field, role string) error {
	if !state.ValidRole(role) {
		return invalidField(field, "must be owner, editor or viewer")
	}
	return nil
}

// hashPassword checks a new password and hashes it with bcrypt.
func (a *API) hashPassword(password string) ([]byte, error) {
	if err := checkPassword(password); err != nil {
		return nil, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), a.pwCost)
	if err != nil {
		return nil, fmt.Errorf("hash password: %w", err)
	}
	return hash, nil
}

// handleAddUser serves POST /admin/v1/accounts/{id}/users.
func (a *API) handleAddUser(w http.ResponseWriter, r *http.Request) {
	var body userBody
	if err := decodeBody(w, r, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	req := UserRequest{Email: body.Email, Role: body.Role}
	if body.Password != nil {
		if *body.Password == "" {
			a.fail(w, r, invalidField("password", "must not be empty; leave it out for a user without one"))
			return
		}
		req.Password = *body.Password
	}
	u, err := a.AddUser(r.Context(), r.PathValue("id"), req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, u)
}

// AddUser validates req and adds the user to the account. An e-mail that
// has a user (in any account) is a 409 user_exists.
func (a *API) AddUser(ctx context.Context, accountID string, req UserRequest) (*User, error) {
	if err := checkEmail(req.Email); err != nil {
		return nil, err
	}
	if err := checkRole("role", req.Role); err != nil {
		return nil, err
	}
	var hash []byte
	if req.Password != "" {
		var err error
		if hash, err = a.hashPassword(req.Password); err != nil {
			return nil, err
		}
	}
	id := uuid.NewString()
	cmd := &raftv1.Command{Op: &raftv1.Command_AddUser{AddUser: &raftv1.AddUser{
		AccountId: accountID, UserId: id, Email: req.Email, Role: req.Role, PasswordHash: hash}}}
	if err := checkCommand(cmd, "the user"); err != nil {
		return nil, err
	}
	if err := a.apply(ctx, cmd); err != nil {
		return nil, err
	}
	return &User{ID: id, Email: req.Email, Role: req.Role, PasswordSet: hash != nil,
		CreatedAt: a.now().UTC().Format(time.RFC3339)}, nil
}

// handleListUsers serves GET /admin/v1/accounts/{id}/users[?stale=true]:
// owners first, then by e-mail.
func (a *API) handleListUsers(w http.ResponseWriter, r *http.Request) {
	if err := a.readConsistency(r); err != nil {
		a.fail(w, r, err)
		return
	}
	users, err := a.Users(r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": users})
}

// Users lists the account's users from this node's copy.
func (a *API) Users(accountID string) ([]User, error) {
	users, err := a.state.Users(accountID)
	if errors.Is(err, state.ErrNotFound) {
		return nil, accountNotFound(accountID)
	}
	if err != nil {
		return nil, fmt.Errorf("read users of %s: %w", accountID, err)
	}
	out := make([]User, 0, len(users))
	for _, u := range users {
		out = append(out, UserFromProto(u))
	}
	return out, nil
}

func accountNotFound(id string) *Error {
	return &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: "account " + id + " not found"}
}

// handleGetUser serves GET /admin/v1/accounts/{id}/users/{user_id}.
func (a *API) handleGetUser(w http.ResponseWriter, r *http.Request) {
	if err := a.readConsistency(r); err != nil {
		a.fail(w, r, err)
		return
	}
	u, err := a.user(r.PathValue("id"), r.PathValue("user_id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, UserFromProto(u))
}

// user reads one user: 404 when the account or the user does not exist.
func (a *API) user(accountID, userID string) (*statev1.User, error) {
	if _, err := a.state.Account(accountID); errors.Is(err, state.ErrNotFound) {
		return nil, accountNotFound(accountID)
	} else if err != nil {
		return nil, fmt.Errorf("read account %s: %w", accountID, err)
	}
	u, err := a.state.User(accountID, userID)
	if errors.Is(err, state.ErrNotFound) {
		return nil, &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: "user " + userID + " not found"}
	}
	if err != nil {
		return nil, fmt.Errorf("read user %s: %w", userID, err)
	}
	return u, nil
}

// handleUpdateUser serves PUT /admin/v1/accounts/{id}/users/{user_id}:
// {role?, password?}; the answer is the user as it is now.
func (a *API) handleUpdateUser(w http.ResponseWriter, r *http.Request) {
	var body userUpdateBody
	if err := decodeBody(w, r, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	if body.Role == nil && body.Password == nil {
		a.fail(w, r, invalidField("role", "give role, password or both"))
		return
	}
	id, userID := r.PathValue("id"), r.PathValue("user_id")
	if err := a.UpdateUser(r.Context(), id, userID, UserUpdate(body)); err != nil {
		a.fail(w, r, err)
		return
	}
	if err := a.cluster.ConsistentRead(r.Context()); err != nil {
		a.fail(w, r, fmt.Errorf("consistent read: %w", err))
		return
	}
	u, err := a.user(id, userID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, UserFromProto(u))
}

// UpdateUser changes a user's role or password (the operator's password
// reset; "" removes it). The user's sessions end when the password
// changes. Taking the owner role from the last owner is a 409 last_owner.
func (a *API) UpdateUser(ctx context.Context, accountID, userID string, up UserUpdate) error {
	c := &raftv1.UpdateUser{AccountId: accountID, UserId: userID}
	if up.Role != nil {
		if err := checkRole("role", *up.Role); err != nil {
			return err
		}
		c.Role = *up.Role
	}
	if up.Password != nil {
		c.SetPassword = true
		if *up.Password != "" {
			var err error
			if c.PasswordHash, err = a.hashPassword(*up.Password); err != nil {
				return err
			}
		}
	}
	cmd := &raftv1.Command{Op: &raftv1.Command_UpdateUser{UpdateUser: c}}
	if err := checkCommand(cmd, "the user"); err != nil {
		return err
	}
	return a.apply(ctx, cmd)
}

// handleRemoveUser serves DELETE /admin/v1/accounts/{id}/users/{user_id}.
func (a *API) handleRemoveUser(w http.ResponseWriter, r *http.Request) {
	if err := a.RemoveUser(r.Context(), r.PathValue("id"), r.PathValue("user_id")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// RemoveUser removes a user; the user's sessions end on every node. The
// last owner cannot be removed (409 last_owner).
func (a *API) RemoveUser(ctx context.Context, accountID, userID string) error {
	cmd := &raftv1.Command{Op: &raftv1.Command_RemoveUser{RemoveUser: &raftv1.RemoveUser{AccountId: accountID, UserId: userID}}}
	if err := checkCommand(cmd, "the user id"); err != nil {
		return err
	}
	return a.apply(ctx, cmd)
}
