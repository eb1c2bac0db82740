package cli

import (
	"errors"
	"net/http"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"lookout/agent"
	"lookout/agent/assign"
	"lookout/agent/forward"
)

// agentLocal is what the agent keeps and serves on its own machine: the
// disk buffer (agent/buffer) and the local Ingest API (agent/ingest).
type agentLocal struct {
	// Buffer is the disk buffer, as the runner and the forwarder use it.
	Buffer agent.Buffer
	// Ingest makes the handler of /ping, /ping/{monitor} and /health:
	// keys accepted by their hash (the last assignments), pings appended
	// to Buffer (fsynced) and the forwarder kicked, X-Quota-* headers
	// from fwd.Quota.
	Ingest func(keys *assign.Store, fwd *forward.Forwarder) http.Handler
	// Close closes the buffer.
	Close func() error
}

// errNoAgentLocal: this build has the agent's runtime but not its disk
// buffer and local ingest (agent/buffer, agent/ingest), which are built
// separately; the lead wires them here when merging.
var errNoAgentLocal = errors.New("lookout agent: this build lacks the disk buffer (agent/buffer) and the local ingest (agent/ingest); the agent cannot run without them")

// openAgentLocal opens the disk buffer in cfg.dataDir, bounded by
// cfg.bufferMaxBytes, registering its metrics on reg.
func openAgentLocal(cfg *agentConfig, log hclog.Logger, reg prometheus.Registerer) (*agentLocal, error) {
	return nil, errNoAgentLocal
}
