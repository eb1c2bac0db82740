// Package manage is the Management API (/api/v1) of a control node:
// authenticated by management keys (mk_) with scopes. So far it serves the
// event history of a monitor; the manifest endpoints join it.
package manage

import (
	"context"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Cluster is what the API needs of the cluster node.
type Cluster interface {
	// ConsistentRead returns once the local state reflects every
	// acknowledged write.
	ConsistentRead(ctx context.Context) error
}

// State is the local copy of the replicated state.
type State interface {
	KeyByHash(hash []byte) (*raftv1.Key, error)
	Monitor(accountID, uuid string) (*statev1.Monitor, error)
	Events(accountID, monitorUUID string, limit int) ([]*statev1.StoredEvent, error)
}

// Options configures the Management API.
type Options struct {
	Cluster Cluster
	State   State
	Logger  hclog.Logger
	Now     func() time.Time
}

// API serves /api/v1.
type API struct {
	cluster Cluster
	state   State
	log     hclog.Logger
	now     func() time.Time
}

// New makes the Management API.
func New(o Options) *API {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &API{cluster: o.Cluster, state: o.State, log: o.Logger, now: o.Now}
}

// Register adds the API's routes to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.Handle("GET /api/v1/monitors/{uuid}/events", a.auth(scopeRead, a.handleEvents))
}
