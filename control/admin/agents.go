package admin

import (
	"fmt"
	"net/http"
	"time"

	"lookout/control/state"
)

// agentJSON is one agent in GET /admin/v1/agents.
type agentJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// TokenID is the agent token it last called with.
	TokenID         string `json:"token_id"`
	Region          string `json:"region"`
	Version         string `json:"version"`
	Connected       bool   `json:"connected"`
	LastSeen        string `json:"last_seen"`
	BufferedEvents  int64  `json:"buffered_events"`
	BufferedResults int64  `json:"buffered_results"`
}

// regionJSON is the leader's verdict on one agent region.
type regionJSON struct {
	Name string `json:"name"`
	// State is online or offline, since Since.
	State string `json:"state"`
	Since string `json:"since"`
}

// agentsJSON is the answer of GET /admin/v1/agents.
type agentsJSON struct {
	Agents  []agentJSON  `json:"agents"`
	Regions []regionJSON `json:"regions"`
}

// handleAgents serves GET /admin/v1/agents: every agent the control plane
// has heard of, connected when it said so in a record at most
// state.AgentConnectedWindow old, and the regions the leader has judged.
// It reads this node's copy of the state without a consistent read, so
// that it answers without a leader; records lag the agents by up to 10 s.
func (a *API) handleAgents(w http.ResponseWriter, r *http.Request) {
	agents, err := a.state.Agents()
	if err != nil {
		a.fail(w, r, fmt.Errorf("agents: %w", err))
		return
	}
	regions, err := a.state.Regions()
	if err != nil {
		a.fail(w, r, fmt.Errorf("regions: %w", err))
		return
	}
	now := a.now().UnixMilli()
	out := agentsJSON{Agents: make([]agentJSON, 0, len(agents)), Regions: make([]regionJSON, 0, len(regions))}
	for _, ag := range agents {
		out.Agents = append(out.Agents, agentJSON{
			ID: ag.GetId(), Name: ag.GetName(), TokenID: ag.GetTokenId(), Region: ag.GetRegion(), Version: ag.GetVersion(),
			Connected: state.AgentConnected(ag, now), LastSeen: rfc3339(ag.GetLastSeenUnixMs()),
			BufferedEvents: ag.GetBufferedEvents(), BufferedResults: ag.GetBufferedResults(),
		})
	}
	for _, rg := range regions {
		st := "online"
		if rg.GetOffline() {
			st = "offline"
		}
		out.Regions = append(out.Regions, regionJSON{Name: rg.GetName(), State: st, Since: rfc3339(rg.GetSinceUnixMs())})
	}
	writeJSON(w, http.StatusOK, out)
}

func rfc3339(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }
