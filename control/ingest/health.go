package ingest

import (
	"encoding/json"
	"net/http"
)

// Health is what /health asks of the node.
type Health interface {
	// Healthy tells whether the node can accept events, and if not why.
	Healthy() (bool, string)
	// ID is the node id.
	ID() string
	// Leader is the leader's node id, "" when there is none.
	Leader() string
}

// handleHealth answers 200 while this node can accept events and 503 with
// the reason when it cannot (no leader, shutting down). It needs no key.
func (a *API) handleHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	ok, reason := a.health.Healthy()
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(map[string]string{"status": "unavailable", "reason": reason, "node": a.health.ID()})
		return
	}
	json.NewEncoder(w).Encode(map[string]string{"status": "ok", "node": a.health.ID(), "leader": a.health.Leader()})
}
