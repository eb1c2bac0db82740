package panel

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/crypto/bcrypt"

	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/state"
)

// A session signed before accounts had users ("v1": account, expiry,
// password tag, nonce) goes on as the session of the account's first
// owner, and ends, like any, when the owner's password changes.
func TestSessionFromBeforeUsers(t *testing.T) {
	store, err := state.Open(state.Options{Dir: t.TempDir(), Small: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := controltest.NewCluster(store, time.Now)
	a := admin.New(admin.Options{Cluster: c, State: store, Token: controltest.Token, PasswordCost: bcrypt.MinCost})
	acct, err := a.CreateAccount(context.Background(), admin.AccountRequest{Email: "old@example.com", Password: "a password"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Cluster: c, State: store, Admin: a, Key: []byte(strings.Repeat("k", 32))})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := store.User(acct.ID, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The cookie as the panel signed it before users.
	payload := strings.Join([]string{"v1", acct.ID, strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10),
		p.mac("password", string(owner.GetPasswordHash()))[:16], "0123456789abcdef"}, ".")
	cookie := &http.Cookie{Name: sessionCookie, Value: base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + p.mac("session", payload)}
	read := func() (*session, error) {
		r := httptest.NewRequest("GET", "/", nil)
		r.AddCookie(cookie)
		return p.readSession(r)
	}
	s, err := read()
	if err != nil || s.AccountID != acct.ID || s.UserID != acct.ID || s.Email != "old@example.com" || s.Role != state.RoleOwner {
		t.Fatalf("a v1 session: %+v %v", s, err)
	}
	if err := a.SetPassword(context.Background(), acct.ID, "another password"); err != nil {
		t.Fatal(err)
	}
	if s, err := read(); err == nil {
		t.Fatalf("a v1 session after a new password: %+v", s)
	}
}
