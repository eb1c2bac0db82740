// Package manage is the Management API (/api/v1) of a control node:
// monitors as manifests (list, get, create, replace, delete, export, apply
// with dry run), the account (with its badge key), its public status page,
// a monitor's event history and the account's audit log, authenticated
// by management keys (mk_) with scopes and limited to 60 requests a minute
// per key. Validation is internal/manifest's; every write is one raft
// command, so an apply is all or nothing.
package manage

import (
	"context"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/keyauth"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/ratelimit"
)

// Cluster is what the API needs of the cluster node.
type Cluster interface {
	// Apply proposes cmd through raft and returns the state machine's
	// result once it is committed and applied.
	Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error)
	// ConsistentRead returns once the local state reflects every
	// acknowledged write.
	ConsistentRead(ctx context.Context) error
}

// State is the local copy of the replicated state.
type State interface {
	KeyByHash(hash []byte) (*raftv1.Key, error)
	// KeysLastUsed returns the recorded last use (Unix ms) of the
	// account's keys that were used, by key id.
	KeysLastUsed(accountID string) (map[string]int64, error)
	Account(id string) (*statev1.Account, error)
	Usage(accountID string, nowMs int64) (monitors, eventsThisPeriod int64, err error)
	QuotaStatus(accountID string, nowMs int64) (*raftv1.QuotaStatus, error)
	NotificationGroupByName(accountID, name string) (*statev1.NotificationGroup, error)
	Monitor(accountID, uuid string) (*statev1.Monitor, error)
	Monitors(accountID string) ([]*statev1.Monitor, error)
	// MonitorsAfter reads a page of the account's monitors in (kind,
	// name) order after a position.
	MonitorsAfter(accountID, kind, afterKind, afterName string, limit int) ([]*statev1.Monitor, error)
	// EventsBefore and ExecutionsBefore read a page of a history, newest
	// first, below a position (state.NewestEvents, nil: from the newest).
	EventsBefore(accountID, monitorUUID string, before uint64, limit int) ([]*statev1.StoredEvent, error)
	ExecutionsBefore(accountID, checkUUID string, before *state.ExecutionPos, limit int) ([]*raftv1.Execution, error)
	CheckStatus(checkUUID string) (*statev1.CheckStatus, error)
	// InOfflineRegion tells whether m is shown unknown because its agent
	// region is offline.
	InOfflineRegion(m *statev1.Monitor) (bool, error)
	StatusPage(accountID string) (*statev1.StatusPage, error)
	MaintenanceWindows(accountID string) ([]*raftv1.MaintenanceWindow, error)
	MaintenanceWindow(accountID, id string) (*raftv1.MaintenanceWindow, error)
	// MonitorInWindow returns the maintenance window that holds m at nowMs
	// and the end of its occurrence (nil: none).
	MonitorInWindow(m *statev1.Monitor, nowMs int64) (*raftv1.MaintenanceWindow, time.Time, error)
	// Dependencies returns m's depends_on with what each names now.
	Dependencies(m *statev1.Monitor) ([]state.DependencyState, error)
	// AuditLog reads a page of the account's audit log, newest first.
	AuditLog(accountID string, before *state.AuditPos, f state.AuditFilter, limit int) ([]*statev1.AuditEntry, error)
}

// Options configures the Management API.
type Options struct {
	Cluster Cluster
	State   State
	Logger  hclog.Logger
	Now     func() time.Time
	// PanelURL is the base URL of the web panel, for links in answers
	// (default: the request's own origin).
	PanelURL string
	// KeyCheckTimeout bounds the check of an unknown key with the leader
	// (default keyauth.DefaultCheckTimeout); past it the answer is 503.
	KeyCheckTimeout time.Duration
	// Limits counts the rate-limit buckets (nil: none).
	Limits *ratelimit.Metrics
}

// API serves /api/v1.
type API struct {
	cluster Cluster
	state   State
	keys    *keyauth.Keys
	log     hclog.Logger
	now     func() time.Time
	panel   string
	limits  *limiters
	uses    *keyUses
}

// New makes the Management API.
func New(o Options) *API {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &API{
		cluster: stampActor{o.Cluster}, state: o.State, keys: keyauth.New(o.State, o.Cluster, o.KeyCheckTimeout),
		log: o.Logger, now: o.Now, panel: o.PanelURL, limits: newLimiters(o.Limits),
		uses: newKeyUses(o.Cluster, o.State, o.Logger, o.Now),
	}
}

// Register adds the API's routes to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.Handle("GET /api/v1/account", a.auth(scopeRead, a.handleAccount))
	mux.Handle("GET /api/v1/monitors", a.auth(scopeRead, a.handleList))
	mux.Handle("GET /api/v1/monitors/export", a.auth(scopeRead, a.handleExport))
	mux.Handle("GET /api/v1/monitors/{uuid}", a.auth(scopeRead, a.handleGet))
	mux.Handle("POST /api/v1/monitors", a.auth(scopeWrite, a.handleCreate))
	mux.Handle("PUT /api/v1/monitors/{uuid}", a.auth(scopeWrite, a.handleReplace))
	mux.Handle("POST /api/v1/monitors/apply", a.auth(scopeWrite, a.handleApply))
	mux.Handle("DELETE /api/v1/monitors/{uuid}", a.auth(scopeDelete, a.handleDelete))
	mux.Handle("GET /api/v1/monitors/{uuid}/events", a.auth(scopeRead, a.handleEvents))
	mux.Handle("GET /api/v1/monitors/{uuid}/executions", a.auth(scopeRead, a.handleExecutions))
	mux.Handle("GET /api/v1/status-page", a.auth(scopeRead, a.handleGetStatusPage))
	mux.Handle("PUT /api/v1/status-page", a.auth(scopeWrite, a.handlePutStatusPage))
	mux.Handle("POST /api/v1/monitors/{uuid}/pause", a.auth(scopeWrite, a.handlePause))
	mux.Handle("POST /api/v1/monitors/{uuid}/resume", a.auth(scopeWrite, a.handleResume))
	mux.Handle("GET /api/v1/maintenance-windows", a.auth(scopeRead, a.handleWindows))
	mux.Handle("POST /api/v1/maintenance-windows", a.auth(scopeWrite, a.handleCreateWindow))
	mux.Handle("GET /api/v1/maintenance-windows/{id}", a.auth(scopeRead, a.handleWindow))
	mux.Handle("PUT /api/v1/maintenance-windows/{id}", a.auth(scopeWrite, a.handleReplaceWindow))
	mux.Handle("DELETE /api/v1/maintenance-windows/{id}", a.auth(scopeDelete, a.handleDeleteWindow))
	mux.Handle("GET /api/v1/audit", a.auth(scopeRead, a.handleAudit))
	// Anything else under /api/v1: a JSON 404, rate limited like the rest.
	mux.Handle("/api/v1/", a.auth(anyScope, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.Method+" "+r.URL.Path)
	}))
}
