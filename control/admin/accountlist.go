package admin

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"time"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// The page sizes of GET /admin/v1/accounts.
const (
	defaultAccountPage = 100
	maxAccountPage     = 1000
)

// accountListItem is one account of GET /admin/v1/accounts.
type accountListItem struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Plan      Plan   `json:"plan"`
	CreatedAt string `json:"created_at"`
}

// accountList is the answer to GET /admin/v1/accounts.
type accountList struct {
	Accounts []accountListItem `json:"accounts"`
	// NextCursor is there while more accounts follow.
	NextCursor string `json:"next_cursor,omitempty"`
}

// handleListAccounts serves GET /admin/v1/accounts[?limit=N][&cursor=C]
// [&stale=true]: the accounts in id order, a page at a time (limit 1 to
// 1000, default 100), next_cursor while more follow. Consistent unless
// stale=true, as GET /admin/v1/accounts/{id}.
func (a *API) handleListAccounts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := defaultAccountPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAccountPage {
			a.fail(w, r, invalidField("limit", "an integer from 1 to 1000"))
			return
		}
		limit = n
	}
	after := ""
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || len(b) == 0 {
			a.fail(w, r, invalidField("cursor", "pass the next_cursor of the previous page"))
			return
		}
		after = string(b)
	}
	if err := a.readConsistency(r); err != nil {
		a.fail(w, r, err)
		return
	}
	accounts, more, err := a.state.AccountsAfter(after, limit)
	if err != nil {
		a.fail(w, r, fmt.Errorf("list accounts: %w", err))
		return
	}
	out := accountList{Accounts: make([]accountListItem, 0, len(accounts))}
	for _, acct := range accounts {
		out.Accounts = append(out.Accounts, accountListItem{
			ID: acct.GetId(), Email: acct.GetEmail(), Plan: PlanFromProto(acct.GetPlan()), CreatedAt: createdAt(acct),
		})
	}
	if more && len(accounts) > 0 {
		out.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(accounts[len(accounts)-1].GetId()))
	}
	writeJSON(w, http.StatusOK, out)
}

// readConsistency makes the read of r consistent (it reflects every
// acknowledged write) unless its query says stale=true, which answers
// from this node's copy even without a leader.
func (a *API) readConsistency(r *http.Request) error {
	stale := false
	if v := r.URL.Query().Get("stale"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return invalidField("stale", "must be true or false")
		}
		stale = b
	}
	if stale {
		return nil
	}
	if err := a.cluster.ConsistentRead(r.Context()); err != nil {
		return fmt.Errorf("consistent read: %w", err)
	}
	return nil
}

// createdAt is when the account was created, RFC 3339 UTC.
func createdAt(acct *statev1.Account) string {
	return time.UnixMilli(acct.GetCreatedUnixMs()).UTC().Format(time.RFC3339)
}
