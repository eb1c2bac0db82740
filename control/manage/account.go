package manage

import (
	"net/http"
	"time"

	"lookout/internal/plans"
)

// handleAccount serves GET /api/v1/account: the account, its plan, its
// usage in the current period, its quota state and its badge key.
func (a *API) handleAccount(w http.ResponseWriter, r *http.Request) {
	if !a.consistent(w, r) {
		return
	}
	id := keyFrom(r.Context()).GetAccountId()
	acct, err := a.state.Account(id)
	if err != nil {
		a.internal(w, err)
		return
	}
	now := a.now().UnixMilli()
	monitors, events, err := a.state.Usage(id, now)
	if err != nil {
		a.internal(w, err)
		return
	}
	quota, err := a.state.QuotaStatus(id, now)
	if err != nil {
		a.internal(w, err)
		return
	}
	// The badge key is made at the account's first read of it; without a
	// leader it cannot be, and the answer says null.
	var badgeKey any
	if k, err := a.BadgeKey(r.Context(), id); err != nil {
		a.log.Warn("making the account's badge key failed", "account", id, "error", err)
	} else {
		badgeKey = k
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":    acct.GetId(),
		"email": acct.GetEmail(),
		"plan":  plans.FromProto(acct.GetPlan()),
		"usage": map[string]any{
			"monitors":           monitors,
			"events_this_period": events,
			"period_resets_at":   time.UnixMilli(quota.GetResetsAtUnixMs()).UTC().Format(time.RFC3339),
		},
		"quota_state": quota.GetState(),
		"badge_key":   badgeKey,
	})
}
