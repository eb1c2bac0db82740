package manage

import (
	"fmt"
	"maps"
	"net/http"

	"github.com/google/uuid"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/manifest"
)

// change is one entry of an apply report.
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

// applyAttempts bounds how often an apply is planned and proposed when the
// state machine refuses it for a change made after the plan was read.
const applyAttempts = 5

// handleApply serves POST /api/v1/monitors/apply[?dry_run=true]: reconcile
// the account with a bundle. Entries match stored monitors by (kind, name);
// the whole bundle is validated first; creates and updates are written as
// ONE raft command (all or nothing); an unchanged bundle writes nothing;
// monitors absent from the bundle are reported as orphaned and left alone.
//
// The plan is made from a read of the state, and another request may
// change the account between that read and the command: a name the plan
// creates is taken, or a monitor it updates is deleted. The state machine
// then refuses the command, and the apply reads the state again (a
// consistent read) and makes a new plan, up to applyAttempts times, so
// that concurrent applies of one bundle all succeed (one creates, the
// others find the monitors made). When every attempt is overtaken the
// answer is 409 concurrent_change.
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
	for attempt := 1; ; attempt++ {
		p, err := a.planApply(acct, bundle, dryRun)
		if err != nil {
			a.internal(w, err)
			return
		}
		if len(p.errs) > 0 {
			writeInvalid(w, p.errs.Body("the bundle is invalid; nothing was written"))
			return
		}
		cmd := &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{
			AccountId: acct, Creates: p.creates, Updates: p.updates, Apply: true,
		}}}
		if len(p.creates)+len(p.updates) > 0 && !fitsOneApply(w, cmd) {
			return
		}
		if dryRun || len(p.creates)+len(p.updates) == 0 {
			writeJSON(w, http.StatusOK, p.report)
			return
		}
		res, ok := a.apply(w, r, cmd)
		if !ok {
			return
		}
		if res.GetStatus() == raftv1.Status_STATUS_OK {
			writeJSON(w, http.StatusOK, p.report)
			return
		}
		if !p.overtaken(res) {
			key := manifest.KeyBundle
			if e := int(res.GetEntry()); e >= 0 && e < len(p.entryOf) {
				key = manifest.EntryKey(p.entryOf[e])
			}
			writeRefused(w, key, res)
			return
		}
		if attempt == applyAttempts {
			a.log.Warn("apply overtaken by concurrent changes on every attempt", "account", acct, "attempts", attempt, "last", res.GetMessage())
			writeError(w, http.StatusConflict, "concurrent_change", "the account's monitors kept changing while the bundle was applied; nothing was written, try again")
			return
		}
		// See what overtook the plan: a consistent read even for
		// ?stale=true, since the local copy may not have it yet.
		if err := a.cluster.ConsistentRead(r.Context()); err != nil {
			if !a.unavailable(w, err) {
				a.internal(w, err)
			}
			return
		}
	}
}

// applyPlan is what an apply writes, and what it reports, given one read of
// the account's monitors.
type applyPlan struct {
	report           report
	creates, updates []*raftv1.MonitorSpec
	// entryOf is the bundle index of each create, then of each update.
	entryOf []int
	errs    manifest.BundleErrors
}

// planApply matches the bundle with the account's monitors as stored now.
func (a *API) planApply(acct string, bundle manifest.Bundle, dryRun bool) (*applyPlan, error) {
	stored, err := a.state.Monitors(acct)
	if err != nil {
		return nil, err
	}
	byName := map[string]manifest.Manifest{}
	for _, m := range stored {
		byName[nameSpace(m.GetKind())+m.GetName()] = storedManifest(m)
	}
	storedByName := maps.Clone(byName)
	p := &applyPlan{report: report{DryRun: dryRun, Summary: map[string]int{"create": 0, "update": 0, "unchanged": 0, "orphaned": 0}, Changes: []change{}, Orphans: []orphan{}}}
	rep := &p.report
	var updateEntries []int
	for i, m := range bundle.Monitors {
		key := nameSpace(m.Kind) + m.Name
		old, exists := byName[key]
		delete(byName, key)
		switch {
		case !exists:
			m = manifest.Resolve(manifest.Manifest{}, m)
			if errs := manifest.CheckSecrets(m); len(errs) > 0 {
				p.errs.Add(manifest.EntryKey(i), errs...)
				continue
			}
			m.UUID = uuid.NewString()
			p.creates = append(p.creates, toSpec(m, false))
			p.entryOf = append(p.entryOf, i)
			c := change{Name: m.Name, Kind: m.Kind, Action: "create"}
			if !dryRun {
				c.UUID = m.UUID
			}
			rep.Changes = append(rep.Changes, c)
			rep.Summary["create"]++
		case old.Kind != m.Kind:
			p.errs.Add(manifest.EntryKey(i), manifest.Error{Code: manifest.CodeNameTakenByOtherKind,
				Message: "a " + old.Kind + " named " + m.Name + " exists"})
		default:
			resolved := manifest.Resolve(old, m)
			if errs := manifest.CheckSecrets(resolved); len(errs) > 0 {
				p.errs.Add(manifest.EntryKey(i), errs...)
				continue
			}
			diff := manifest.Diff(old, resolved)
			if len(diff) == 0 {
				rep.Summary["unchanged"]++
				continue
			}
			p.updates = append(p.updates, toSpec(resolved, m.Project == nil))
			updateEntries = append(updateEntries, i)
			rep.Changes = append(rep.Changes, change{Name: m.Name, Kind: m.Kind, Action: "update", UUID: old.UUID, Diff: diff})
			rep.Summary["update"]++
		}
	}
	p.entryOf = append(p.entryOf, updateEntries...)
	sent := make([]manifest.Manifest, len(bundle.Monitors))
	for i, m := range bundle.Monitors {
		sent[i] = m
		if old, ok := storedByName[nameSpace(m.Kind)+m.Name]; ok {
			sent[i].UUID = old.UUID
		}
	}
	errs := dependencyErrors(stored, sent)
	for i := range bundle.Monitors {
		p.errs.Add(manifest.EntryKey(i), errs[i]...)
	}
	for _, m := range stored {
		if _, orphaned := byName[nameSpace(m.GetKind())+m.GetName()]; orphaned {
			rep.Orphans = append(rep.Orphans, orphan{Name: m.GetName(), Kind: m.GetKind(), UUID: m.GetUuid()})
		}
	}
	rep.Summary["orphaned"] = len(rep.Orphans)
	return p, nil
}

// overtaken tells whether the state machine refused the plan's command
// because the account changed after the plan was read: a name the plan
// found free is taken (the plan checked the names it creates against its
// read, and the bundle has no duplicates), or a monitor it updates is gone.
// A new plan sees the change. Any other refusal stands.
func (p *applyPlan) overtaken(res *raftv1.Result) bool {
	entry := int(res.GetEntry())
	switch res.GetStatus() {
	case raftv1.Status_STATUS_CONFLICT:
		code := res.GetCode()
		return (code == manifest.CodeNameAlreadyExists || code == manifest.CodeNameTakenByOtherKind) && entry >= 0 && entry < len(p.creates)
	case raftv1.Status_STATUS_NOT_FOUND:
		return entry >= len(p.creates) && entry < len(p.creates)+len(p.updates)
	}
	return false
}

// codeBundleTooLarge refuses an apply whose changes do not fit one raft
// command (state.MaxPutMonitors monitors, state.MaxPutMonitorsBytes).
const codeBundleTooLarge = "bundle_too_large"

// fitsOneApply checks that the PutMonitors of an apply is within the state
// machine's bounds (state.CheckCommand: MaxPutMonitors monitors,
// MaxPutMonitorsBytes); false means it answered 422
// bundle_too_large. Only creates and updates count: unchanged entries cost
// nothing, and applying part of a bundle leaves the rest alone (apply
// never deletes), so a large bundle can be applied in parts.
func fitsOneApply(w http.ResponseWriter, cmd *raftv1.Command) bool {
	err := state.CheckCommand(cmd)
	if err == nil {
		return true
	}
	msg := fmt.Sprintf("the bundle's changes are too large for one apply (%v): apply it in parts (apply never deletes, so a part leaves the other monitors alone)", err)
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
