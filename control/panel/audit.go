package panel

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"lookout/control/audit"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// The audit log: who changed what in the panel is the signed-in user
// (signedIn puts the actor in the request's context; every command the
// panel proposes, itself or through the operator and Management APIs' Go
// calls, carries it), and the account's log has a page, /audit.

// userActor is the actor of a panel user: the one place the panel says
// who its user is in the audit log (its id and e-mail).
func userActor(userID, email string) *raftv1.Actor {
	return audit.User(userID, email)
}

// sessionActor is the actor of a signed-in session.
func sessionActor(s *session) *raftv1.Actor { return userActor(s.UserID, s.Email) }

// stampActor is the panel's Cluster with the actor of each request's
// context stamped on the commands it proposes (audit.Stamp).
type stampActor struct{ Cluster }

func (c stampActor) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	return c.Cluster.Apply(ctx, audit.Stamp(ctx, cmd))
}

// recordSignIn records the sign-in of the account's user in its audit log
// (RecordSignIn); method is how they signed in.
func (p *Panel) recordSignIn(ctx context.Context, u *statev1.User, method string) error {
	res, err := p.o.Cluster.Apply(ctx, &raftv1.Command{Actor: userActor(u.GetId(), u.GetEmail()),
		Op: &raftv1.Command_RecordSignIn{RecordSignIn: &raftv1.RecordSignIn{AccountId: u.GetAccountId(), Method: method}}})
	if err == nil && res.GetStatus() != raftv1.Status_STATUS_OK {
		err = &signInRefused{res.GetMessage()}
	}
	return err
}

type signInRefused struct{ msg string }

func (e *signInRefused) Error() string { return "record sign-in: " + e.msg }

// auditPageSize is how many entries the audit page shows at once.
const auditPageSize = 50

// auditRow is one entry as the page shows it.
type auditRow struct {
	ID, Action string
	AtMs       int64
	// ActorType is user, key, operator (or unknown); Actor its name.
	ActorType, Actor, ActorID string
	TargetKind, Target        string
	// MonitorUUID links a monitor's entry to its page.
	MonitorUUID string
	Changes     []auditChange
}

// auditChange is one field of an entry's diff.
type auditChange struct{ Field, Before, After string }

type auditView struct {
	baseView
	Rows  []auditRow
	NowMs int64
	// The filters, as typed.
	Actor, Monitor, Action string
	Filtered               bool
	// Newest: the page starts at the newest entry; Older is the address
	// of the next page ("" when none), its query encoded here.
	Newest bool
	Older  template.URL
	// Actions are the actions the filter suggests.
	Actions []string
}

// auditActions are the actions the page's filter suggests.
var auditActions = []string{"apply", "create", "update", "delete", "key.create", "key.revoke",
	"channel.create", "channel.update", "channel.delete", "notification_group.create", "notification_group.update",
	"notification_group.delete", "plan.update", "password.set", "badge_key.regenerate", "status_page.update",
	"sign_in", "sign_out", "pause", "resume", "maintenance_window.create", "maintenance_window.update",
	"maintenance_window.delete", "user.add", "user.update", "user.remove", "invite.create", "invite.accept", "invite.revoke"}

// handleAudit serves GET /audit?actor=&monitor=&action=&before=: the
// account's audit log, newest first, auditPageSize entries a page, with
// the filters of GET /api/v1/audit.
func (p *Panel) handleAudit(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	q := r.URL.Query()
	v := &auditView{Actor: strings.TrimSpace(q.Get("actor")), Monitor: strings.TrimSpace(q.Get("monitor")),
		Action: strings.TrimSpace(q.Get("action")), Actions: auditActions}
	v.Filtered = v.Actor != "" || v.Monitor != "" || v.Action != ""
	var before *state.AuditPos
	if c := q.Get("before"); c != "" {
		pos, ok := audit.ParseCursor(c)
		if !ok {
			p.errorPage(w, r, http.StatusBadRequest, "That page of the audit log does not exist: start again from the newest.")
			return
		}
		before = &pos
	}
	v.Newest = before == nil
	v.Stale = p.refresh(r)
	f := state.AuditFilter{Actor: v.Actor, Monitor: v.Monitor, Action: v.Action}
	entries, err := p.o.State.AuditLog(s.AccountID, before, f, auditPageSize+1)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	if len(entries) > auditPageSize {
		entries = entries[:auditPageSize]
		next := url.Values{"before": {audit.Cursor(state.AuditPosOf(entries[auditPageSize-1]))}}
		for k, val := range map[string]string{"actor": v.Actor, "monitor": v.Monitor, "action": v.Action} {
			if val != "" {
				next.Set(k, val)
			}
		}
		v.Older = template.URL("/audit?" + next.Encode())
	}
	for _, e := range entries {
		v.Rows = append(v.Rows, toAuditRow(e))
	}
	v.NowMs = p.now().UnixMilli()
	v.Title, v.Nav, v.CSRF, v.Account = "Audit log", "audit", s.CSRF, s.Email
	p.render(w, r, http.StatusOK, "audit", v)
}

func toAuditRow(e *statev1.AuditEntry) auditRow {
	a, t := e.GetActor(), e.GetTarget()
	row := auditRow{ID: audit.ID(e), Action: e.GetAction(), AtMs: e.GetAtUnixMs(),
		ActorType: a.GetType(), Actor: a.GetName(), ActorID: a.GetId(), TargetKind: t.GetKind(), Target: t.GetName()}
	if a == nil {
		row.ActorType = "unknown"
	}
	if t.GetKind() == state.AuditMonitor && e.GetAction() != "delete" {
		row.MonitorUUID = t.GetUuid()
	}
	var diff map[string][2]any
	if json.Unmarshal(e.GetDiffJson(), &diff) == nil {
		for field, d := range diff {
			row.Changes = append(row.Changes, auditChange{Field: field, Before: shownValue(d[0]), After: shownValue(d[1])})
		}
		sort.Slice(row.Changes, func(i, j int) bool { return row.Changes[i].Field < row.Changes[j].Field })
	}
	return row
}

// shownValue is one side of a diff as text: "–" for none, a string as it
// is, anything else as JSON.
func shownValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "–"
	case string:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}
