package manage

import (
	"net/http"
	"time"

	"lookout/internal/plans"
)

// handleAccount serves GET /api/v1/account: the account, its plan, its
// usage in the current period and its quota state.
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
	})
}
