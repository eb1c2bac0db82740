package manage

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
)

// handleList serves GET /api/v1/monitors[?kind=][&limit=&cursor=]
// [&include=status]: every monitor, in (kind, name) order; with limit (1
// to 1000) a page, and next_cursor while more remain; with include=status
// each with its read-only status, as GET /api/v1/monitors/{uuid} has it.
func (a *API) handleList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	kind := q.Get("kind")
	if kind != "" && !manifest.KnownKind(kind) {
		writeError(w, http.StatusBadRequest, "invalid_request", "invalid field: kind: ping, http_check, ssl_check, tcp_check or dns_check")
		return
	}
	withStatus := false
	switch q.Get("include") {
	case "":
	case "status":
		withStatus = true
	default:
		writeError(w, http.StatusBadRequest, "invalid_request", "invalid field: include: status is the only value")
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
	afterKind, afterName := "", ""
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		k, n, ok := strings.Cut(string(b), "\x00")
		if err != nil || !ok || limit == 0 {
			writeError(w, http.StatusBadRequest, "invalid_request", "invalid field: cursor: pass the next_cursor of the previous page, with limit")
			return
		}
		afterKind, afterName = k, n
	}
	if !a.consistent(w, r) {
		return
	}
	// A page reads the name index from the cursor on: one more than the
	// page tells whether another follows.
	var all []*statev1.Monitor
	var err error
	if limit > 0 {
		all, err = a.state.MonitorsAfter(keyFrom(r.Context()).GetAccountId(), kind, afterKind, afterName, limit+1)
	} else {
		all, err = a.state.Monitors(keyFrom(r.Context()).GetAccountId())
	}
	if err != nil {
		a.internal(w, err)
		return
	}
	out := []monitorWithStatus{}
	next := ""
	for _, m := range all {
		if kind != "" && m.GetKind() != kind {
			continue
		}
		if limit > 0 && len(out) == limit {
			next = base64.RawURLEncoding.EncodeToString([]byte(cursorOf(out[len(out)-1].Manifest)))
			break
		}
		if withStatus {
			out = append(out, a.withStatus(m))
		} else {
			out = append(out, monitorWithStatus{Manifest: toManifest(m)})
		}
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
	raw, ok := a.body(w, r)
	if !ok {
		return
	}
	m, err := a.CreateMonitor(r.Context(), keyFrom(r.Context()).GetAccountId(), raw)
	if err != nil {
		a.writeFailure(w, "", err)
		return
	}
	writeJSON(w, http.StatusCreated, manifest.Masked(m))
}

// handleReplace serves PUT /api/v1/monitors/{uuid}: the manifest replaces
// the monitor wholesale (ReplaceMonitor).
func (a *API) handleReplace(w http.ResponseWriter, r *http.Request) {
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
	m, err := a.ReplaceMonitor(r.Context(), stored.GetAccountId(), stored.GetUuid(), raw)
	if err != nil {
		a.writeFailure(w, stored.GetUuid(), err)
		return
	}
	writeJSON(w, http.StatusOK, manifest.Masked(m))
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

// checkDependencies refuses (an *Invalid) a manifest of acct whose
// depends_on names a monitor the account does not have, or that would
// close a cycle, read after a consistent read (the names are resolved
// again when an alert is about to be sent).
func (a *API) checkDependencies(ctx context.Context, acct string, m manifest.Manifest) error {
	if len(m.DependsOn) == 0 {
		return nil
	}
	if err := a.cluster.ConsistentRead(ctx); err != nil {
		return err
	}
	stored, err := a.state.Monitors(acct)
	if err != nil {
		return err
	}
	if errs := dependencyErrors(stored, []manifest.Manifest{m})[0]; len(errs) > 0 {
		return &Invalid{Summary: "the manifest is invalid", Errors: errs}
	}
	return nil
}
