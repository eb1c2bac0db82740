package manage

import (
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
)

// handleList serves GET /api/v1/monitors[?kind=][&limit=&cursor=]: every
// monitor, in (kind, name) order; with limit (1 to 1000) a page, and
// next_cursor while more remain.
func (a *API) handleList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	kind := q.Get("kind")
	if kind != "" && kind != manifest.KindPing && kind != manifest.KindHTTP && kind != manifest.KindSSL {
		writeError(w, http.StatusBadRequest, "invalid_request", "invalid field: kind: ping, http_check or ssl_check")
		return
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, "invalid_request", "invalid field: limit: an integer from 1 to 1000")
			return
		}
		limit = n
	}
	after := ""
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || limit == 0 {
			writeError(w, http.StatusBadRequest, "invalid_request", "invalid field: cursor: pass the next_cursor of the previous page, with limit")
			return
		}
		after = string(b)
	}
	if !a.consistent(w, r) {
		return
	}
	all, err := a.state.Monitors(keyFrom(r.Context()).GetAccountId())
	if err != nil {
		a.internal(w, err)
		return
	}
	out := []manifest.Manifest{}
	next := ""
	for _, m := range all {
		if kind != "" && m.GetKind() != kind {
			continue
		}
		pos := m.GetKind() + "\x00" + m.GetName()
		if after != "" && pos <= after {
			continue
		}
		if limit > 0 && len(out) == limit {
			next = base64.RawURLEncoding.EncodeToString([]byte(cursorOf(out[len(out)-1])))
			break
		}
		out = append(out, toManifest(m))
	}
	body := map[string]any{"monitors": out}
	if next != "" {
		body["next_cursor"] = next
	}
	writeJSON(w, http.StatusOK, body)
}

func cursorOf(m manifest.Manifest) string { return m.Kind + "\x00" + m.Name }

// handleGet serves GET /api/v1/monitors/{uuid}: the manifest and, for a
// ping monitor, its read-only status.
func (a *API) handleGet(w http.ResponseWriter, r *http.Request) {
	if !a.consistent(w, r) {
		return
	}
	m, ok := a.monitor(w, r)
	if ok {
		writeJSON(w, http.StatusOK, a.withStatus(m))
	}
}

// monitor reads the {uuid} monitor of the key's account; false means it
// answered (404 also for another account's monitor).
func (a *API) monitor(w http.ResponseWriter, r *http.Request) (*statev1.Monitor, bool) {
	id := r.PathValue("uuid")
	m, err := a.state.Monitor(keyFrom(r.Context()).GetAccountId(), id)
	if isNotFound(err) {
		notFound(w, id)
		return nil, false
	}
	if err != nil {
		a.internal(w, err)
		return nil, false
	}
	return m, true
}

// handleCreate serves POST /api/v1/monitors: 201 with the stored manifest.
func (a *API) handleCreate(w http.ResponseWriter, r *http.Request) {
	acct := keyFrom(r.Context()).GetAccountId()
	raw, ok := a.body(w, r)
	if !ok {
		return
	}
	m, errs := manifest.Parse(raw, a.manifestOptions(acct))
	if len(errs) > 0 {
		writeInvalid(w, errs.Body("the manifest is invalid"))
		return
	}
	m = manifest.Resolve(manifest.Manifest{}, m)
	m.UUID = uuid.NewString()
	if !a.dependenciesHold(w, r, acct, m) {
		return
	}
	res, ok := a.apply(w, r, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{
		AccountId: acct, Creates: []*raftv1.MonitorSpec{toSpec(m, false)},
	}}})
	if !ok {
		return
	}
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		writeRefused(w, manifest.KeyManifest, res)
		return
	}
	writeJSON(w, http.StatusCreated, m)
}

// handleReplace serves PUT /api/v1/monitors/{uuid}: the manifest replaces
// the monitor wholesale (omitting display_name clears it, omitting
// notification_group detaches it, omitting project leaves it).
func (a *API) handleReplace(w http.ResponseWriter, r *http.Request) {
	acct := keyFrom(r.Context()).GetAccountId()
	if !a.consistent(w, r) {
		return
	}
	stored, ok := a.monitor(w, r)
	if !ok {
		return
	}
	raw, ok := a.body(w, r)
	if !ok {
		return
	}
	m, errs := manifest.Parse(raw, a.manifestOptions(acct))
	if len(errs) == 0 && m.Kind != stored.GetKind() {
		errs = append(errs, manifest.Error{Code: manifest.CodeKindMismatch, Message: "kind cannot change: the monitor is a " + stored.GetKind()})
	} else if len(errs) == 0 && m.Kind == manifest.KindPing && m.Name != stored.GetName() {
		errs = append(errs, manifest.Error{Code: manifest.CodeNameImmutable, Message: "the name of a ping monitor cannot change"})
	}
	if len(errs) > 0 {
		writeInvalid(w, errs.Body("the manifest is invalid"))
		return
	}
	resolved := manifest.Resolve(toManifest(stored), m)
	if !a.dependenciesHold(w, r, acct, resolved) {
		return
	}
	res, ok := a.apply(w, r, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{
		AccountId: acct, Updates: []*raftv1.MonitorSpec{toSpec(resolved, m.Project == nil)},
	}}})
	if !ok {
		return
	}
	switch res.GetStatus() {
	case raftv1.Status_STATUS_OK:
		writeJSON(w, http.StatusOK, resolved)
	case raftv1.Status_STATUS_NOT_FOUND:
		notFound(w, stored.GetUuid())
	default:
		writeRefused(w, manifest.KeyManifest, res)
	}
}

// handleDelete serves DELETE /api/v1/monitors/{uuid}?confirm=true. Without
// exactly one confirm=true nothing is deleted: 403 with a link to the
// panel. A repeated confirm (confirm=true&confirm=false) is no
// confirmation, whatever its values.
func (a *API) handleDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("uuid")
	if confirm := r.URL.Query()["confirm"]; len(confirm) != 1 || confirm[0] != "true" {
		writeJSON(w, http.StatusForbidden, map[string]string{
			"message":   "deleting a monitor needs confirm=true, given once (or the panel)",
			"panel_url": a.panelURL(r) + "/monitors/" + id,
			"code":      "delete_requires_confirm",
		})
		return
	}
	if len(id) > state.MaxKeyPartBytes {
		notFound(w, id) // no monitor has such an id; the command would be over its bounds
		return
	}
	res, ok := a.apply(w, r, &raftv1.Command{Op: &raftv1.Command_DeleteMonitor{DeleteMonitor: &raftv1.DeleteMonitor{
		AccountId: keyFrom(r.Context()).GetAccountId(), MonitorUuid: id,
	}}})
	if !ok {
		return
	}
	if res.GetStatus() == raftv1.Status_STATUS_NOT_FOUND {
		notFound(w, id)
		return
	}
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		a.internal(w, errString(res.GetMessage()))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// panelURL is the base URL of the panel: the configured one, or the
// request's own origin.
func (a *API) panelURL(r *http.Request) string {
	if a.panel != "" {
		return a.panel
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

type errString string

func (e errString) Error() string { return string(e) }

// dependenciesHold checks m's depends_on against the account (a
// consistent read first); false means it answered (422 under manifest).
func (a *API) dependenciesHold(w http.ResponseWriter, r *http.Request, acct string, m manifest.Manifest) bool {
	if len(m.DependsOn) == 0 {
		return true
	}
	if !a.consistent(w, r) {
		return false
	}
	stored, err := a.state.Monitors(acct)
	if err != nil {
		a.internal(w, err)
		return false
	}
	if errs := dependencyErrors(stored, []manifest.Manifest{m})[0]; len(errs) > 0 {
		writeInvalid(w, errs.Body("the manifest is invalid"))
		return false
	}
	return true
}
