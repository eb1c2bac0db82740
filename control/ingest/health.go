// Package ingest is the Ingest API of a control node: GET /health now; the
// ping endpoints come with the ingest work.
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

// API serves the Ingest API.
type API struct {
	health Health
}

// Options configures the Ingest API.
type Options struct {
	Health Health
}

// New makes the Ingest API.
func New(o Options) *API { return &API{health: o.Health} }

// Register adds the API's routes to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /health", a.handleHealth)
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
