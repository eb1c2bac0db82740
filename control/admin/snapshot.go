package admin

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"lookout/control/state"
)

// codeInvalidSnapshot is the 400 of a restore whose file is cut short,
// damaged or not a snapshot at all.
const codeInvalidSnapshot = "invalid_snapshot"

// snapshotRestored is the answer of a restore.
type snapshotRestored struct {
	AppliedIndex uint64 `json:"applied_index"`
	Bytes        int64  `json:"bytes"`
}

// handleSaveSnapshot serves GET /admin/v1/snapshot: a backup file of the
// replicated state (state.WriteBackup), taken after a consistent read, so
// it holds every write acknowledged before the request. The state is read
// from one Badger read transaction while writes go on. An error after the
// first byte aborts the connection, and the file's missing checksum tells
// the client.
func (a *API) handleSaveSnapshot(w http.ResponseWriter, r *http.Request) {
	if err := a.cluster.ConsistentRead(r.Context()); err != nil {
		a.fail(w, r, fmt.Errorf("consistent read: %w", err))
		return
	}
	snap, err := a.state.Snapshot()
	if err != nil {
		a.fail(w, r, fmt.Errorf("open snapshot: %w", err))
		return
	}
	defer snap.Release()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="lookout.snapshot"`)
	if _, err := state.WriteBackup(w, snap); err != nil {
		a.log.Error("snapshot save failed midway", "error", err)
		panic(http.ErrAbortHandler)
	}
}

// handleRestoreSnapshot serves POST /admin/v1/snapshot: the body, a file
// of handleSaveSnapshot, is spooled to disk and checked whole (format,
// every record, checksum) before anything changes; a bad file is a 400
// and changes nothing. Then the cluster replaces its state with it through
// raft (Cluster.Restore), so every node ends with the restored state.
func (a *API) handleRestoreSnapshot(w http.ResponseWriter, r *http.Request) {
	f, err := os.CreateTemp(a.spoolDir, "lookout-restore-*.tmp")
	if err != nil {
		a.fail(w, r, fmt.Errorf("spool snapshot: %w", err))
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	// A large file takes longer than the server's read timeout for a
	// whole request; the upload is bounded by the client instead.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	n, err := io.Copy(f, r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidSnapshot, fmt.Sprintf("could not read the whole snapshot (%d bytes read): %v", n, err))
		return
	}
	info, err := state.CheckBackup(io.NewSectionReader(f, 0, n))
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidSnapshot, err.Error()+"; nothing was changed")
		return
	}
	if err := a.cluster.Restore(r.Context(), io.NewSectionReader(f, info.Offset, info.Size), info.Size); err != nil {
		a.fail(w, r, fmt.Errorf("restore snapshot: %w", err))
		return
	}
	a.log.Warn("state restored from a snapshot", "applied_index", info.AppliedIndex, "bytes", n)
	writeJSON(w, http.StatusOK, snapshotRestored{AppliedIndex: info.AppliedIndex, Bytes: n})
}
