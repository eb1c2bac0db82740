package admin

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// passwordBody is the JSON of PUT /admin/v1/accounts/{id}/password.
type passwordBody struct {
	Password *string `json:"password"`
}

// handleSetPassword serves PUT /admin/v1/accounts/{id}/password: it
// replaces the account's panel password (an empty one removes it: no
// panel sign-in). Sessions signed in with the old password end.
func (a *API) handleSetPassword(w http.ResponseWriter, r *http.Request) {
	var body passwordBody
	if err := decodeBody(w, r, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	if body.Password == nil {
		a.fail(w, r, invalidField("password", "required (\"\" removes the password)"))
		return
	}
	if err := a.SetPassword(r.Context(), r.PathValue("id"), *body.Password); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// SetPassword hashes password with bcrypt and stores it as the account's
// panel password; "" removes the password.
func (a *API) SetPassword(ctx context.Context, accountID, password string) error {
	var hash []byte
	if password != "" {
		if err := checkPassword(password); err != nil {
			return err
		}
		var err error
		if hash, err = bcrypt.GenerateFromPassword([]byte(password), a.pwCost); err != nil {
			return fmt.Errorf("hash password: %w", err)
		}
	}
	cmd := &raftv1.Command{Op: &raftv1.Command_SetPassword{SetPassword: &raftv1.SetPassword{AccountId: accountID, PasswordHash: hash}}}
	if err := checkCommand(cmd, "the password"); err != nil {
		return err
	}
	return a.apply(ctx, cmd)
}

// checkPassword is the rule for a panel password.
func checkPassword(password string) error {
	if utf8.RuneCountInString(password) < minPassword || len(password) > maxPassword {
		return invalidField("password", "must be at least "+strconv.Itoa(minPassword)+" characters and at most "+strconv.Itoa(maxPassword)+" bytes")
	}
	return nil
}
