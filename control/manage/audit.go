package manage

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"lookout/control/audit"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// stampActor is the API's Cluster with the actor of each request's
// context stamped on the commands it proposes (audit.Stamp): the key that
// authenticated an HTTP request (auth), or the panel user of a Go call
// the panel makes.
type stampActor struct{ Cluster }

func (c stampActor) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	return c.Cluster.Apply(ctx, audit.Stamp(ctx, cmd))
}

// auditEntryJSON is one entry of GET /api/v1/audit.
type auditEntryJSON struct {
	ID     string           `json:"id"`
	At     string           `json:"at"`
	Actor  auditActorJSON   `json:"actor"`
	Action string           `json:"action"`
	Target auditTargetJSON  `json:"target"`
	Diff   *json.RawMessage `json:"diff"`
}

// auditActorJSON is who made a change: type user, key or operator
// (unknown for a change whose command carried no actor), with the user's
// id and e-mail or the key's id and name.
type auditActorJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

type auditTargetJSON struct {
	Kind string `json:"kind"`
	UUID string `json:"uuid"`
	Name string `json:"name"`
}

// actorOf is the actor of an audit entry.
func actorOf(e *statev1.AuditEntry) auditActorJSON {
	a := e.GetActor()
	if a == nil {
		return auditActorJSON{Type: "unknown"}
	}
	return auditActorJSON{Type: a.GetType(), ID: a.GetId(), Name: a.GetName()}
}

func toAuditJSON(e *statev1.AuditEntry) auditEntryJSON {
	diff := json.RawMessage(`{}`)
	if len(e.GetDiffJson()) > 0 {
		diff = json.RawMessage(e.GetDiffJson())
	}
	t := e.GetTarget()
	return auditEntryJSON{
		ID:     audit.ID(e),
		At:     time.UnixMilli(e.GetAtUnixMs()).UTC().Format(time.RFC3339Nano),
		Actor:  actorOf(e),
		Action: e.GetAction(),
		Target: auditTargetJSON{Kind: t.GetKind(), UUID: t.GetUuid(), Name: t.GetName()},
		Diff:   &diff,
	}
}

// handleAudit serves GET /api/v1/audit?limit=N&before=C&actor=&monitor=&action=:
// the account's audit log, newest first, below the cursor C when given,
// only the entries that match the filters (actor: the actor's id, name or
// type; monitor: a monitor's uuid or name; action: exactly), and
// next_before (the cursor of the next page) while more may remain.
func (a *API) handleAudit(w http.ResponseWriter, r *http.Request) {
	limit, ok := historyLimit(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	var before *state.AuditPos
	if c := q.Get("before"); c != "" {
		p, ok := audit.ParseCursor(c)
		if !ok {
			badBefore(w)
			return
		}
		before = &p
	}
	if !a.consistent(w, r) {
		return
	}
	f := state.AuditFilter{Actor: q.Get("actor"), Monitor: q.Get("monitor"), Action: q.Get("action")}
	// One more than the page tells whether another page follows.
	entries, err := a.state.AuditLog(keyFrom(r.Context()).GetAccountId(), before, f, limit+1)
	if err != nil {
		a.internal(w, err)
		return
	}
	body := map[string]any{}
	if len(entries) > limit {
		entries = entries[:limit]
		body["next_before"] = audit.Cursor(state.AuditPosOf(entries[limit-1]))
	}
	out := make([]auditEntryJSON, 0, len(entries))
	for _, e := range entries {
		out = append(out, toAuditJSON(e))
	}
	body["entries"] = out
	writeJSON(w, http.StatusOK, body)
}
