package manage

import (
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/manifest"
)

// change is one entry of an apply report (api.md 2.4).
type change struct {
	Name   string            `json:"name"`
	Kind   string            `json:"kind"`
	Action string            `json:"action"`
	UUID   string            `json:"uuid,omitempty"`
	Diff   map[string][2]any `json:"diff,omitempty"`
}

type orphan struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	UUID string `json:"uuid"`
}

type report struct {
	DryRun  bool           `json:"dry_run"`
	Summary map[string]int `json:"summary"`
	Changes []change       `json:"changes"`
	Orphans []orphan       `json:"orphaned"`
}

// handleApply serves POST /api/v1/monitors/apply[?dry_run=true]: reconcile
// the account with a bundle. Entries match stored monitors by (kind, name);
// the whole bundle is validated first; creates and updates are written as
// ONE raft command (all or nothing); an unchanged bundle writes nothing;
// monitors absent from the bundle are reported as orphaned and left alone.
func (a *API) handleApply(w http.ResponseWriter, r *http.Request) {
	acct := keyFrom(r.Context()).GetAccountId()
	dryRun := r.URL.Query().Get("dry_run") == "true"
	if !a.consistent(w, r) {
		return
	}
	account, err := a.state.Account(acct)
	if err != nil {
		a.internal(w, err)
		return
	}
	if !account.GetPlan().GetConfigAsCode() {
		writeError(w, http.StatusForbidden, "config_as_code_disabled", "config as code is disabled on this account's plan; export still works")
		return
	}
	raw, ok := a.body(w, r)
	if !ok {
		return
	}
	bundle, errs := manifest.ParseBundle(raw, a.manifestOptions(acct))
	if len(errs) > 0 {
		writeInvalid(w, errs.Body("the bundle is invalid; nothing was written"))
		return
	}
	stored, err := a.state.Monitors(acct)
	if err != nil {
		a.internal(w, err)
		return
	}
	byName := map[string]manifest.Manifest{}
	for _, m := range stored {
		byName[nameSpace(m.GetKind())+m.GetName()] = toManifest(m)
	}
	rep := report{DryRun: dryRun, Summary: map[string]int{"create": 0, "update": 0, "unchanged": 0, "orphaned": 0}, Changes: []change{}, Orphans: []orphan{}}
	var creates, updates []*raftv1.MonitorSpec
	var entryOf []int // bundle index of each create, then each update
	var updateEntries []int
	var bundleErrs manifest.BundleErrors
	for i, m := range bundle.Monitors {
		key := nameSpace(m.Kind) + m.Name
		old, exists := byName[key]
		delete(byName, key)
		switch {
		case !exists:
			m = manifest.Resolve(manifest.Manifest{}, m)
			m.UUID = uuid.NewString()
			creates = append(creates, toSpec(m, false))
			entryOf = append(entryOf, i)
			c := change{Name: m.Name, Kind: m.Kind, Action: "create"}
			if !dryRun {
				c.UUID = m.UUID
			}
			rep.Changes = append(rep.Changes, c)
			rep.Summary["create"]++
		case old.Kind != m.Kind:
			bundleErrs.Add(manifest.EntryKey(i), manifest.Error{Code: manifest.CodeNameTakenByOtherKind,
				Message: "a " + old.Kind + " named " + m.Name + " exists"})
		default:
			resolved := manifest.Resolve(old, m)
			diff := manifest.Diff(old, resolved)
			if len(diff) == 0 {
				rep.Summary["unchanged"]++
				continue
			}
			updates = append(updates, toSpec(resolved, m.Project == nil))
			updateEntries = append(updateEntries, i)
			rep.Changes = append(rep.Changes, change{Name: m.Name, Kind: m.Kind, Action: "update", UUID: old.UUID, Diff: diff})
			rep.Summary["update"]++
		}
	}
	if len(bundleErrs) > 0 {
		writeInvalid(w, bundleErrs.Body("the bundle is invalid; nothing was written"))
		return
	}
	for _, m := range stored {
		if _, orphaned := byName[nameSpace(m.GetKind())+m.GetName()]; orphaned {
			rep.Orphans = append(rep.Orphans, orphan{Name: m.GetName(), Kind: m.GetKind(), UUID: m.GetUuid()})
		}
	}
	rep.Summary["orphaned"] = len(rep.Orphans)
	cmd := &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{
		AccountId: acct, Creates: creates, Updates: updates,
	}}}
	if n := len(creates) + len(updates); n > 0 && !fitsOneApply(w, n, cmd) {
		return
	}
	if dryRun || len(creates)+len(updates) == 0 {
		writeJSON(w, http.StatusOK, rep)
		return
	}
	entryOf = append(entryOf, updateEntries...)
	res, ok := a.apply(w, r, cmd)
	if !ok {
		return
	}
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		key := manifest.KeyBundle
		if e := int(res.GetEntry()); e >= 0 && e < len(entryOf) {
			key = manifest.EntryKey(entryOf[e])
		}
		writeRefused(w, key, res)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// codeBundleTooLarge refuses an apply whose changes do not fit one raft
// command (state.MaxPutMonitors monitors, state.MaxPutMonitorsBytes).
const codeBundleTooLarge = "bundle_too_large"

// fitsOneApply checks that the PutMonitors of an apply changing n monitors
// is within the state machine's bounds; false means it answered 422
// bundle_too_large. Only creates and updates count: unchanged entries cost
// nothing, and applying part of a bundle leaves the rest alone (apply
// never deletes), so a large bundle can be applied in parts.
func fitsOneApply(w http.ResponseWriter, n int, cmd *raftv1.Command) bool {
	var msg string
	if n > state.MaxPutMonitors {
		msg = fmt.Sprintf("the bundle would create or update %d monitors; one apply changes at most %d: apply it in parts (apply never deletes, so a part leaves the other monitors alone)", n, state.MaxPutMonitors)
	} else if err := state.CheckCommand(cmd); err != nil {
		msg = fmt.Sprintf("the bundle's changes are too large for one apply (%v): apply it in parts (apply never deletes, so a part leaves the other monitors alone)", err)
	} else {
		return true
	}
	writeInvalid(w, manifest.ErrorBody{
		Message:    msg,
		Errors:     map[string][]string{manifest.KeyBundle: {msg}},
		ErrorCodes: map[string][]string{manifest.KeyBundle: {codeBundleTooLarge}},
	})
	return false
}

// nameSpace is the name space of a kind: ping monitors, or checks.
func nameSpace(kind string) string {
	if kind == manifest.KindPing {
		return "ping\x00"
	}
	return "check\x00"
}

// handleExport serves GET /api/v1/monitors/export: the whole account as a
// bundle without uuids, which apply takes back unchanged.
func (a *API) handleExport(w http.ResponseWriter, r *http.Request) {
	if !a.consistent(w, r) {
		return
	}
	stored, err := a.state.Monitors(keyFrom(r.Context()).GetAccountId())
	if err != nil {
		a.internal(w, err)
		return
	}
	ms := make([]manifest.Manifest, 0, len(stored))
	for _, m := range stored {
		ms = append(ms, toManifest(m))
	}
	writeJSON(w, http.StatusOK, manifest.NewBundle(ms))
}
