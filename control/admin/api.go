// Package admin is the operator API, /admin/v1: accounts, their users, plans, keys,
// notification groups, alert channels, agent tokens and the cluster's
// status. It is JSON over HTTP, authenticated by one operator token, and
// is what the `lookout admin` commands call.
//
// Writes are validated here, and everything random (ids, secrets, their
// hashes, bcrypt hashes) is made here, before the command is proposed: the
// state machine only applies what it is given.
package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/crypto/bcrypt"

	"lookout/cluster/clusterapi"
	"lookout/control/alert/channel"
	"lookout/control/alert/channelregistry"
	"lookout/control/audit"
	"lookout/control/keyauth"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/ratelimit"
)

// Cluster is what the operator API needs of the raft cluster.
type Cluster interface {
	// Apply proposes cmd and returns the state machine's result.
	Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error)
	// ConsistentRead returns once the local state reflects every
	// acknowledged write.
	ConsistentRead(ctx context.Context) error
	// Status reports the cluster as this node sees it.
	Status(ctx context.Context) (clusterapi.Status, error)
	// Restore replaces the replicated state, on every node, with the
	// snapshot stream in r (size bytes, checked by the caller).
	Restore(ctx context.Context, r io.ReaderAt, size int64) error
}

// State is what the operator API reads of the replicated state.
type State interface {
	// Account returns the account with id, or an error wrapping
	// state.ErrNotFound.
	Account(id string) (*statev1.Account, error)
	// AccountsAfter returns up to limit accounts in id order after the
	// id after ("" from the first), and whether more follow.
	AccountsAfter(after string, limit int) ([]*statev1.Account, bool, error)
	// Users returns the account's users (an error wrapping
	// state.ErrNotFound for an unknown account); User one of them.
	Users(accountID string) ([]*statev1.User, error)
	User(accountID, userID string) (*statev1.User, error)
	// Invites returns the account's pending invitations (expired ones
	// too); InviteByToken the one of a link's secret, by its hash.
	Invites(accountID string) ([]*statev1.Invite, error)
	InviteByToken(tokenHash []byte) (*statev1.Invite, error)
	// Keys returns the account's keys in id order; KeysLastUsed the
	// recorded last use (Unix ms) of those that were used, by key id.
	Keys(accountID string) ([]*raftv1.Key, error)
	KeysLastUsed(accountID string) (map[string]int64, error)
	// Usage counts the account's monitors and the events stored in the
	// period of nowMs.
	Usage(accountID string, nowMs int64) (monitors, eventsThisPeriod int64, err error)
	// Channel returns an alert channel of the account, or an error
	// wrapping state.ErrNotFound.
	Channel(accountID, id string) (*statev1.Channel, error)
	// Channels lists the account's alert channels; ChannelHistory is a
	// channel's delivery history, newest first.
	Channels(accountID string) ([]*statev1.Channel, error)
	ChannelHistory(accountID, channelID string) ([]*statev1.DeliveryRecord, error)
	// NotificationGroup returns a group of the account, or an error
	// wrapping state.ErrNotFound; NotificationGroups lists them.
	NotificationGroup(accountID, id string) (*statev1.NotificationGroup, error)
	NotificationGroups(accountID string) ([]*statev1.NotificationGroup, error)
	// AgentToken returns the live agent token with id, or an error
	// wrapping state.ErrNotFound; AgentTokens lists them by region, then
	// name.
	AgentToken(id string) (*statev1.AgentToken, error)
	AgentTokens() ([]*statev1.AgentToken, error)
	// Agents and Regions are what the control plane knows of the edge
	// agents and the leader's verdicts on their regions.
	Agents() ([]*statev1.Agent, error)
	Regions() ([]*statev1.Region, error)
	// Snapshot opens a point-in-time view of the local state.
	Snapshot() (clusterapi.Snapshot, error)
}

// Options configures the operator API.
type Options struct {
	// Cluster applies commands and confirms reads.
	Cluster Cluster
	// State is the local copy of the replicated state.
	State State
	// Channels validates channel configs when they are saved and makes
	// the channels that test messages go through, with the operator's
	// Deps (SMTP server, HTTP client). Nil means every channel type with
	// empty Deps: no SMTP server, so e-mail channels are refused.
	Channels *channel.Registry
	// Token is the operator token. When empty, every request is refused.
	Token string
	// SpoolDir is where a restore keeps the uploaded snapshot while it is
	// checked and restored (default: the system's temporary directory).
	SpoolDir string
	// Logger defaults to a null logger.
	Logger hclog.Logger
	// Now defaults to time.Now.
	Now func() time.Time
	// PasswordCost is the bcrypt cost of panel passwords (default
	// bcrypt.DefaultCost; tests lower it).
	PasswordCost int
	// Limits counts the wrong-token throttle's buckets (nil: none).
	Limits *ratelimit.Metrics
}

// API serves /admin/v1.
type API struct {
	cluster   Cluster
	state     State
	channels  *channel.Registry
	tokenHash [sha256.Size]byte
	hasToken  bool
	throttle  *ratelimit.Throttle
	spoolDir  string
	log       hclog.Logger
	now       func() time.Time
	pwCost    int
}

// New returns the operator API.
func New(o Options) *API {
	a := &API{
		cluster:   o.Cluster,
		state:     o.State,
		channels:  o.Channels,
		tokenHash: sha256.Sum256([]byte(o.Token)),
		hasToken:  o.Token != "",
		throttle:  ratelimit.NewThrottle(ratelimit.ThrottleOptions{Name: "admin_token", Burst: authFailureBurst, PerSecond: authFailureRate, Metrics: o.Limits}),
		spoolDir:  o.SpoolDir,
		log:       o.Logger,
		now:       o.Now,
		pwCost:    o.PasswordCost,
	}
	if a.log == nil {
		a.log = hclog.NewNullLogger()
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.pwCost == 0 {
		a.pwCost = bcrypt.DefaultCost
	}
	if a.channels == nil {
		a.channels = channelregistry.New(channel.Deps{})
	}
	if !a.hasToken {
		a.log.Warn("no admin token set: the operator API refuses every request")
	}
	return a
}

// Register adds the operator API under /admin/v1/ to mux.
func (a *API) Register(mux *http.ServeMux) {
	routes := http.NewServeMux()
	routes.HandleFunc("POST /admin/v1/accounts", a.handleCreateAccount)
	routes.HandleFunc("GET /admin/v1/accounts", a.handleListAccounts)
	routes.HandleFunc("GET /admin/v1/accounts/{id}", a.handleGetAccount)
	routes.HandleFunc("PUT /admin/v1/accounts/{id}/plan", a.handleSetPlan)
	routes.HandleFunc("PUT /admin/v1/accounts/{id}/password", a.handleSetPassword)
	routes.HandleFunc("POST /admin/v1/accounts/{id}/users", a.handleAddUser)
	routes.HandleFunc("GET /admin/v1/accounts/{id}/users", a.handleListUsers)
	routes.HandleFunc("GET /admin/v1/accounts/{id}/users/{user_id}", a.handleGetUser)
	routes.HandleFunc("PUT /admin/v1/accounts/{id}/users/{user_id}", a.handleUpdateUser)
	routes.HandleFunc("DELETE /admin/v1/accounts/{id}/users/{user_id}", a.handleRemoveUser)
	routes.HandleFunc("POST /admin/v1/accounts/{id}/keys", a.handleCreateKey)
	routes.HandleFunc("GET /admin/v1/accounts/{id}/keys", a.handleListKeys)
	routes.HandleFunc("DELETE /admin/v1/accounts/{id}/keys/{key_id}", a.handleRevokeKey)
	routes.HandleFunc("POST /admin/v1/accounts/{id}/notification-groups", a.handleCreateGroup)
	routes.HandleFunc("GET /admin/v1/accounts/{id}/notification-groups", a.handleListGroups)
	routes.HandleFunc("GET /admin/v1/accounts/{id}/notification-groups/{group_id}", a.handleGetGroup)
	routes.HandleFunc("PUT /admin/v1/accounts/{id}/notification-groups/{group_id}", a.handlePutGroup)
	routes.HandleFunc("DELETE /admin/v1/accounts/{id}/notification-groups/{group_id}", a.handleDeleteGroup)
	routes.HandleFunc("POST /admin/v1/accounts/{id}/channels", a.handleCreateChannel)
	routes.HandleFunc("GET /admin/v1/accounts/{id}/channels", a.handleListChannels)
	routes.HandleFunc("GET /admin/v1/accounts/{id}/channels/{channel_id}", a.handleGetChannel)
	routes.HandleFunc("PUT /admin/v1/accounts/{id}/channels/{channel_id}", a.handlePutChannel)
	routes.HandleFunc("DELETE /admin/v1/accounts/{id}/channels/{channel_id}", a.handleDeleteChannel)
	routes.HandleFunc("GET /admin/v1/accounts/{id}/channels/{channel_id}/deliveries", a.handleChannelDeliveries)
	routes.HandleFunc("POST /admin/v1/accounts/{id}/channels/{channel_id}/test", a.handleTestChannel)
	routes.HandleFunc("POST /admin/v1/agent-tokens", a.handleCreateAgentToken)
	routes.HandleFunc("GET /admin/v1/agent-tokens", a.handleListAgentTokens)
	routes.HandleFunc("POST /admin/v1/agent-tokens/{id}/rotate", a.handleRotateAgentToken)
	routes.HandleFunc("GET /admin/v1/agents", a.handleAgents)
	routes.HandleFunc("DELETE /admin/v1/agents/{id}", a.handleForgetAgent)
	routes.HandleFunc("DELETE /admin/v1/agent-tokens/{id}", a.handleRevokeAgentToken)
	routes.HandleFunc("GET /admin/v1/cluster", a.handleCluster)
	registerPprof(routes)
	routes.HandleFunc("GET /admin/v1/snapshot", a.handleSaveSnapshot)
	routes.HandleFunc("POST /admin/v1/snapshot", a.handleRestoreSnapshot)
	mux.Handle("/admin/v1/", a.authenticate(jsonFallback(routes)))
}

// authenticate refuses requests without the operator token. The token is
// compared in constant time (on hashes, so its length does not leak
// either), before the throttle is asked: a right token is never refused,
// so nobody can lock the operator out by sending wrong ones (behind a
// proxy that is not named in --trusted-proxies every client shares one
// address). Wrong tokens are counted per client address (throttle.go);
// past the budget they, and requests without a token, are answered 429.
func (a *API) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := keyauth.ClientAddr(r)
		token, _, err := keyauth.BearerToken(r)
		if err != nil || token == "" {
			if wait := a.throttle.Wait(addr, a.now()); wait > 0 {
				writeThrottled(w, wait)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="lookout-admin"`)
			writeError(w, http.StatusUnauthorized, codeUnauthenticated, "missing operator token: send Authorization: Bearer <token>")
			return
		}
		got := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(got[:], a.tokenHash[:]) == 1 && a.hasToken {
			next.ServeHTTP(w, r.WithContext(audit.WithActor(r.Context(), audit.Operator())))
			return
		}
		if wait := a.throttle.Fail(addr, a.now()); wait > 0 {
			writeThrottled(w, wait)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="lookout-admin", error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, codeUnauthenticated, "invalid operator token")
	})
}

// jsonFallback serves routes, answering requests that match no route (404)
// or no method of their route (405) with a JSON error body, as every other
// error of the API is.
func jsonFallback(routes *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := routes.Handler(r); pattern != "" {
			routes.ServeHTTP(w, r)
			return
		}
		routes.ServeHTTP(&fallbackWriter{ResponseWriter: w}, r)
	})
}

// fallbackWriter replaces the mux's plain-text 404 and 405 bodies.
type fallbackWriter struct {
	http.ResponseWriter
	replaced bool
}

func (f *fallbackWriter) WriteHeader(status int) {
	switch status {
	case http.StatusNotFound:
		f.replaced = true
		writeError(f.ResponseWriter, status, codeNotFound, "no such endpoint")
	case http.StatusMethodNotAllowed:
		f.replaced = true
		writeError(f.ResponseWriter, status, codeMethodNotAllowed, "method not allowed on this endpoint")
	default:
		f.ResponseWriter.WriteHeader(status)
	}
}

func (f *fallbackWriter) Write(b []byte) (int, error) {
	if f.replaced {
		return len(b), nil
	}
	return f.ResponseWriter.Write(b)
}
