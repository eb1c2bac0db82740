package panel

import (
	"net/http"

	"lookout/control/admin"
)

type accountView struct {
	baseView
	Email    string
	Plan     admin.Plan
	Monitors int64
	// Quota is ok, warning, exceeded or suspended.
	Quota      string
	QuotaColor string
	Used       int64
	Limit      *int64
	// Overage is how far usage is past the allowance (while exceeded or
	// suspended).
	Overage   int64
	Percent   int64
	ResetsMs  int64
	NowMs     int64
	CreatedMs int64
	// The badge key and the status page (publish.go).
	publishView
}

var quotaColors = map[string]string{"ok": "green", "warning": "amber", "exceeded": "red", "suspended": "red"}

// handleAccount serves GET /account: plan, usage and quota, the badge key
// and the status page.
func (p *Panel) handleAccount(w http.ResponseWriter, r *http.Request) {
	p.showAccount(w, r, http.StatusOK, nil)
}

// showAccount renders the account page with status; adjust, when set,
// changes the view before (a form's refusal).
func (p *Panel) showAccount(w http.ResponseWriter, r *http.Request, status int, adjust func(*accountView)) {
	s := sessionFrom(r.Context())
	stale := p.refresh(r)
	acct, err := p.o.State.Account(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	nowMs := p.now().UnixMilli()
	monitors, _, err := p.o.State.Usage(s.AccountID, nowMs)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	q, err := p.o.State.QuotaStatus(s.AccountID, nowMs)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	v := &accountView{Email: acct.GetEmail(), Plan: admin.PlanFromProto(acct.GetPlan()), Monitors: monitors,
		Quota: q.GetState(), QuotaColor: quotaColors[q.GetState()], Used: q.GetUsed(), Limit: q.Limit,
		ResetsMs: q.GetResetsAtUnixMs(), NowMs: nowMs, CreatedMs: acct.GetCreatedUnixMs()}
	if q.Limit != nil {
		if q.GetLimit() > 0 {
			v.Percent = min(100, q.GetUsed()*100/q.GetLimit())
		}
		if (q.GetState() == "exceeded" || q.GetState() == "suspended") && q.GetUsed() > q.GetLimit() {
			v.Overage = q.GetUsed() - q.GetLimit()
		}
	}
	if err := p.loadPublish(r, s.AccountID, &v.publishView, nil); err != nil {
		p.internal(w, r, err)
		return
	}
	switch {
	case r.URL.Query().Get("badge") == "new":
		v.Flash = "A new badge key: the badge URLs with the old one no longer work."
	case r.URL.Query().Get("page") == "saved":
		v.Flash = "Status page saved."
	}
	if adjust != nil {
		adjust(v)
	}
	v.Title, v.Nav, v.CSRF, v.Account, v.Stale = "Account", "account", s.CSRF, s.Email, stale
	p.render(w, r, status, "account", v)
}
