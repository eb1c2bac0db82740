package cli

import (
	"net/http"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"lookout/agent"
	"lookout/agent/assign"
	"lookout/agent/buffer"
	"lookout/agent/forward"
	"lookout/agent/ingest"
	"lookout/agent/link"
	"lookout/agent/region"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// agentLocal is what the agent keeps and serves on its own machine: the
// disk buffer (agent/buffer) and the local Ingest API (agent/ingest).
type agentLocal struct {
	// Buffer is the disk buffer, as the runner and the forwarder use it.
	Buffer agent.Buffer
	// Ingest makes the handler of /ping, /ping/{monitor} and /health:
	// keys accepted by their hash (the last assignments), pings appended
	// to Buffer (fsynced) and the forwarder kicked, X-Quota-* headers
	// from fwd.Quota, the link's and the pool's state in /health.
	Ingest func(keys *assign.Store, fwd *forward.Forwarder, lk *link.Client, pool *region.Pool) http.Handler
	// Close closes the buffer.
	Close func() error
	// Failed, when set, is closed once the buffer can no longer store
	// anything (the agent stops); Health says why.
	Failed <-chan struct{}
	Health func() error
}

// openAgentLocal opens the disk buffer in cfg.dataDir/buffer, bounded by
// cfg.bufferMaxBytes, registering its metrics and the local ingest's on
// reg. The buffer uses Badger's small options: as fast for its load, with
// about a third of the memory (docs/performance.md).
func openAgentLocal(cfg *agentConfig, log hclog.Logger, reg prometheus.Registerer, recovered func()) (*agentLocal, error) {
	buf, err := buffer.Open(buffer.Options{
		Dir: filepath.Join(cfg.dataDir, "buffer"), MaxBytes: cfg.bufferMaxBytes,
		Logger: log.Named("buffer"), Small: true, Registerer: reg, Recovered: recovered,
	})
	if err != nil {
		return nil, err
	}
	return &agentLocal{
		Buffer: bufferAdapter{buf},
		Ingest: func(keys *assign.Store, fwd *forward.Forwarder, lk *link.Client, pool *region.Pool) http.Handler {
			return ingest.New(ingest.Options{
				Keys:   keys,
				Sink:   kickingSink{buf: buf, fwd: fwd},
				Quotas: forwarderQuotas{fwd},
				Stats:  buf.Stats,
				Health: buf.Health,
				Link: func() ingest.Link {
					return ingest.Link{Connected: lk.State() == link.Connected, Control: lk.URL(), Region: cfg.region}
				},
				Gossip: func() ingest.Gossip {
					return ingest.Gossip{State: pool.State(), Members: len(pool.MemberIDs())}
				},
				Logger:     log.Named("ingest"),
				Registerer: reg,
			}).Handler()
		},
		Close:  buf.Close,
		Failed: buf.Failed(),
		Health: buf.Health,
	}, nil
}

// kickingSink appends an accepted ping to the buffer and wakes the
// forwarder.
type kickingSink struct {
	buf *buffer.Buffer
	fwd *forward.Forwarder
}

func (s kickingSink) AppendEvent(ev *raftv1.Event) error {
	if err := s.buf.AppendEvent(ev); err != nil {
		return err
	}
	s.fwd.Kick()
	return nil
}

// forwarderQuotas gives the local ingest the last quota the control plane
// reported per account.
type forwarderQuotas struct{ fwd *forward.Forwarder }

func (q forwarderQuotas) Last(accountID string) *raftv1.QuotaStatus {
	st, ok := q.fwd.Quota(accountID)
	if !ok {
		return nil
	}
	return st
}

// bufferAdapter is the disk buffer as the agent's loops see it.
type bufferAdapter struct{ *buffer.Buffer }

func (a bufferAdapter) Events(max, maxBytes int) ([]forward.EventEntry, error) {
	es, err := a.Buffer.Events(max, maxBytes)
	out := make([]forward.EventEntry, len(es))
	for i, e := range es {
		out[i] = forward.EventEntry(e)
	}
	return out, err
}

func (a bufferAdapter) Results(max, maxBytes int) ([]forward.ResultEntry, error) {
	rs, err := a.Buffer.Results(max, maxBytes)
	out := make([]forward.ResultEntry, len(rs))
	for i, r := range rs {
		out[i] = forward.ResultEntry(r)
	}
	return out, err
}

func (a bufferAdapter) Stats() forward.BufferStats {
	s := a.Buffer.Stats()
	return forward.BufferStats{Events: s.Events, Results: s.Results, Bytes: s.Bytes, OldestUnixMs: s.OldestUnixMs,
		DroppedResults: s.DroppedResults, RefusedFull: s.RefusedFull}
}
