package manage

import (
	"net/http"

	"github.com/google/uuid"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/maintenance"
	"lookout/internal/manifest"
)

// handleWindows serves GET /api/v1/maintenance-windows: the account's
// windows, by id, each with its status (active now, the end of the
// occurrence under way, the next start).
func (a *API) handleWindows(w http.ResponseWriter, r *http.Request) {
	if !a.consistent(w, r) {
		return
	}
	ws, err := a.state.MaintenanceWindows(keyFrom(r.Context()).GetAccountId())
	if err != nil {
		a.internal(w, err)
		return
	}
	out := make([]maintenance.JSON, 0, len(ws))
	for _, mw := range ws {
		out = append(out, maintenance.ToJSON(mw, a.now()))
	}
	writeJSON(w, http.StatusOK, map[string]any{"maintenance_windows": out})
}

// handleWindow serves GET /api/v1/maintenance-windows/{id}.
func (a *API) handleWindow(w http.ResponseWriter, r *http.Request) {
	if !a.consistent(w, r) {
		return
	}
	if mw, ok := a.window(w, r); ok {
		writeJSON(w, http.StatusOK, maintenance.ToJSON(mw, a.now()))
	}
}

// window reads the {id} window of the key's account; false means it
// answered.
func (a *API) window(w http.ResponseWriter, r *http.Request) (*raftv1.MaintenanceWindow, bool) {
	id := r.PathValue("id")
	mw, err := a.state.MaintenanceWindow(keyFrom(r.Context()).GetAccountId(), id)
	if isNotFound(err) || len(id) > state.MaxKeyPartBytes {
		writeError(w, http.StatusNotFound, "not_found", "no maintenance window "+id)
		return nil, false
	}
	if err != nil {
		a.internal(w, err)
		return nil, false
	}
	return mw, true
}

// handleCreateWindow serves POST /api/v1/maintenance-windows: 201 with the
// window and its new id.
func (a *API) handleCreateWindow(w http.ResponseWriter, r *http.Request) {
	a.putWindow(w, r, uuid.NewString(), true)
}

// handleReplaceWindow serves PUT /api/v1/maintenance-windows/{id}: the
// window replaced wholesale.
func (a *API) handleReplaceWindow(w http.ResponseWriter, r *http.Request) {
	if !a.consistent(w, r) {
		return
	}
	if mw, ok := a.window(w, r); ok {
		a.putWindow(w, r, mw.GetId(), false)
	}
}

// putWindow validates the body and proposes it as window id.
func (a *API) putWindow(w http.ResponseWriter, r *http.Request, id string, create bool) {
	acct := keyFrom(r.Context()).GetAccountId()
	raw, ok := a.body(w, r)
	if !ok {
		return
	}
	mw, errs := maintenance.Parse(raw, maintenance.Options{Now: a.now(), MonitorExists: func(id string) bool {
		_, err := a.state.Monitor(acct, id)
		return err == nil
	}})
	if len(errs) > 0 {
		var b manifest.BundleErrors
		b.Add(maintenance.Key, errs...)
		writeInvalid(w, b.Body("the maintenance window is invalid"))
		return
	}
	mw.Id, mw.AccountId = id, acct
	res, ok := a.apply(w, r, &raftv1.Command{Op: &raftv1.Command_PutMaintenanceWindow{PutMaintenanceWindow: &raftv1.PutMaintenanceWindow{Window: mw, Create: create}}})
	if !ok {
		return
	}
	switch {
	case res.GetStatus() == raftv1.Status_STATUS_OK:
	case res.GetStatus() == raftv1.Status_STATUS_NOT_FOUND:
		writeError(w, http.StatusNotFound, "not_found", "no maintenance window "+id)
		return
	case res.GetCode() == state.CodeWindowLimitReached:
		writeRefused(w, maintenance.Key, res)
		return
	default:
		a.internal(w, errString(res.GetMessage()))
		return
	}
	status := http.StatusOK
	if create {
		status = http.StatusCreated
	}
	writeJSON(w, status, maintenance.ToJSON(mw, a.now()))
}

// handleDeleteWindow serves DELETE /api/v1/maintenance-windows/{id}: 204;
// no confirm needed (a window holds alerts; deleting it loses no data).
// The monitors it held are judged afresh at once.
func (a *API) handleDeleteWindow(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if len(id) > state.MaxKeyPartBytes {
		writeError(w, http.StatusNotFound, "not_found", "no maintenance window "+id)
		return
	}
	res, ok := a.apply(w, r, &raftv1.Command{Op: &raftv1.Command_DeleteMaintenanceWindow{DeleteMaintenanceWindow: &raftv1.DeleteMaintenanceWindow{
		AccountId: keyFrom(r.Context()).GetAccountId(), Id: id,
	}}})
	if !ok {
		return
	}
	switch res.GetStatus() {
	case raftv1.Status_STATUS_OK:
		w.WriteHeader(http.StatusNoContent)
	case raftv1.Status_STATUS_NOT_FOUND:
		writeError(w, http.StatusNotFound, "not_found", "no maintenance window "+id)
	default:
		a.internal(w, errString(res.GetMessage()))
	}
}
