// Package panel is the web panel every control node serves at /: sign-in,
// the account's monitors with their events streamed live (Server-Sent
// Events), forms to make, edit and copy monitors, keys, notification
// groups and channels, the account's plan and usage, its audit log, and
// deleting a monitor after typing its name.
//
// Pages are html/template, parsed once at start, with their CSS and the
// little JavaScript of the live stream embedded in the binary (no build
// step, no CDN). Sessions are signed cookies (session.go): any node
// accepts a session another node signed, so a failover keeps people
// signed in. Reads come from the node's copy of the state; writes are raft
// commands, proposed through the same Cluster as the APIs', or the
// operator API's and the Management API's own Go calls (keys, channels,
// groups; monitors), which check them the same way.
package panel

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/admin"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
	"lookout/internal/metrics"
	"lookout/internal/ratelimit"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Cluster is what the panel needs of the raft cluster.
type Cluster interface {
	// Apply proposes cmd and returns the state machine's result.
	Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error)
	// ConsistentRead returns once the local state reflects every
	// acknowledged write.
	ConsistentRead(ctx context.Context) error
}

// State is what the panel reads of the node's copy of the state.
type State interface {
	Account(id string) (*statev1.Account, error)
	// User and UserByEmail read one user (state.Store.User): who a
	// session is, who signs in.
	User(accountID, userID string) (*statev1.User, error)
	UserByEmail(email string) (*statev1.User, error)
	// SessionEnded tells whether a session (by its id, the nonce of its
	// cookie) was signed out.
	SessionEnded(id string) (bool, error)
	Usage(accountID string, nowMs int64) (monitors, eventsThisPeriod int64, err error)
	QuotaStatus(accountID string, nowMs int64) (*raftv1.QuotaStatus, error)
	Monitor(accountID, uuid string) (*statev1.Monitor, error)
	MonitorByUUID(uuid string) (*statev1.Monitor, error)
	Monitors(accountID string) ([]*statev1.Monitor, error)
	// MonitorList reads every monitor of the account as a list shows it.
	MonitorList(accountID string) ([]state.ListedMonitor, error)
	Events(accountID, monitorUUID string, limit int) ([]*statev1.StoredEvent, error)
	Executions(accountID, checkUUID string, limit int) ([]*raftv1.Execution, error)
	// EventsBefore and ExecutionsBefore read an older page of a history.
	EventsBefore(accountID, monitorUUID string, before uint64, limit int) ([]*statev1.StoredEvent, error)
	ExecutionsBefore(accountID, checkUUID string, before *state.ExecutionPos, limit int) ([]*raftv1.Execution, error)
	CheckStatus(checkUUID string) (*statev1.CheckStatus, error)
	InOfflineRegion(m *statev1.Monitor) (bool, error)
	// Uptimes and UnknownSince are what a monitor's uptime figures are
	// computed from (state.UptimeOver).
	Uptimes(ids []string) (map[string]*statev1.Uptime, error)
	UnknownSince(m *statev1.Monitor) (int64, error)
	StatusPage(accountID string) (*statev1.StatusPage, error)
	Keys(accountID string) ([]*raftv1.Key, error)
	// KeysLastUsed is the last recorded use (Unix ms) of the account's
	// keys that were used, by key id.
	KeysLastUsed(accountID string) (map[string]int64, error)
	Channels(accountID string) ([]*statev1.Channel, error)
	NotificationGroups(accountID string) ([]*statev1.NotificationGroup, error)
	NotificationGroup(accountID, id string) (*statev1.NotificationGroup, error)
	NewFeed() *state.Feed
	MaintenanceWindows(accountID string) ([]*raftv1.MaintenanceWindow, error)
	MonitorInWindow(m *statev1.Monitor, nowMs int64) (*raftv1.MaintenanceWindow, time.Time, error)
	Dependencies(m *statev1.Monitor) ([]state.DependencyState, error)
	// AuditLog reads a page of the account's audit log, newest first.
	AuditLog(accountID string, before *state.AuditPos, f state.AuditFilter, limit int) ([]*statev1.AuditEntry, error)
}

// Admin is the operator API's writes for one account (admin.API).
type Admin interface {
	CreateKey(ctx context.Context, accountID string, req admin.KeyRequest) (*admin.KeyCreated, error)
	RevokeKey(ctx context.Context, accountID, keyID string) error
	CreateChannel(ctx context.Context, accountID string, req admin.ChannelRequest) (*admin.ChannelCreated, error)
	GetChannel(accountID, channelID string) (*admin.Channel, error)
	UpdateChannel(ctx context.Context, accountID, channelID string, req admin.ChannelRequest) (*admin.Channel, error)
	DeleteChannel(ctx context.Context, accountID, channelID string) error
	ChannelDeliveries(accountID, channelID string) ([]admin.Delivery, error)
	CreateGroup(ctx context.Context, accountID, name string, channels json.RawMessage) (*admin.GroupCreated, error)
	UpdateGroup(ctx context.Context, accountID, groupID, name string, channels json.RawMessage) (*admin.Group, error)
	DeleteGroup(ctx context.Context, accountID, groupID string) error
	TestChannel(ctx context.Context, accountID, channelID, panelURL string) error
	ChannelTypes() []string
	// Users, UpdateUser and RemoveUser read and change the account's
	// users; the invitation calls make, list, revoke, read and accept
	// invitation links.
	Users(accountID string) ([]admin.User, error)
	UpdateUser(ctx context.Context, accountID, userID string, up admin.UserUpdate) error
	RemoveUser(ctx context.Context, accountID, userID string) error
	CreateInvite(ctx context.Context, accountID, invitedBy, email, role string) (*admin.InviteCreated, error)
	Invites(accountID string) ([]admin.Invite, error)
	RevokeInvite(ctx context.Context, accountID, inviteID string) error
	InviteByToken(token string) (*admin.Invite, *statev1.Invite, error)
	AcceptInvite(ctx context.Context, token, email, password string) (*statev1.User, error)
}

// Manage is the Management API's monitor writes (manage.API): the forms
// make and change monitors through them, as POST and PUT /api/v1/monitors
// do. A refused manifest is a *manage.Invalid.
type Manage interface {
	CreateMonitor(ctx context.Context, accountID string, raw json.RawMessage) (manifest.Manifest, error)
	ReplaceMonitor(ctx context.Context, accountID, id string, raw json.RawMessage) (manifest.Manifest, error)
}

// Options configures the panel.
type Options struct {
	Cluster Cluster
	State   State
	Admin   Admin
	// Publishing changes the badge key and the status page (manage.API;
	// nil: the account page shows neither).
	Publishing Publishing
	// Manage makes and changes monitors for the forms (nil: the panel
	// has no monitor forms).
	Manage Manage
	// PublicURL is the address people and jobs reach the node at
	// (--public-url), for the ping URL and snippets of a ping monitor;
	// empty: the origin of the page's request.
	PublicURL string
	// SSO, when set, adds sign-in with an OpenID Connect provider (it
	// needs PublicURL, where the provider sends people back to).
	SSO *SSOOptions
	// Key signs session cookies and CSRF tokens (cluster.PanelKey): the
	// same on every node. At least 32 bytes.
	Key []byte
	// Secure marks cookies Secure (the node serves HTTPS).
	Secure bool
	// SessionTTL is how long a sign-in lasts (default 7 days).
	SessionTTL time.Duration
	// MaxStreams bounds the live streams open at once (default 1000);
	// MaxStreamsPerAccount bounds one account's (default a tenth of
	// MaxStreams), so that one account cannot take them all.
	MaxStreams, MaxStreamsPerAccount int
	// Metrics counts the live streams (nil: none).
	Metrics *metrics.Panel
	// Limits counts the sign-in throttle's buckets (nil: none).
	Limits *ratelimit.Metrics
	// Logger defaults to a null logger.
	Logger hclog.Logger
	// Now defaults to time.Now.
	Now func() time.Time
}

// Panel serves the web panel.
type Panel struct {
	o        Options
	log      hclog.Logger
	now      func() time.Time
	pages    map[string]*template.Template
	throttle *ratelimit.Throttle
	// dummyHash is what an unknown e-mail's password is compared with,
	// so that it takes as long as a wrong password; made on first use,
	// so that a process that never signs anyone in never pays for it.
	dummyHash func() []byte
	hub       *hub
	// sso is the client of the SSO provider (nil: no single sign-on).
	sso  *sso
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// Failed sign-ins are throttled per client address: 5 in a row, then one
// every 12 seconds (ratelimit.Throttle).
const (
	signInBurst = 5
	signInRate  = 1.0 / 12
)

// New parses the templates and returns the panel; Start begins the live
// stream's watch of the state.
func New(o Options) (*Panel, error) {
	if len(o.Key) < 32 {
		return nil, errors.New("panel: the signing key must be at least 32 bytes")
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = 7 * 24 * time.Hour
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = 1000
	}
	if o.MaxStreamsPerAccount <= 0 {
		o.MaxStreamsPerAccount = max(o.MaxStreams/10, 1)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	o.Cluster = stampActor{o.Cluster} // the signed-in user is the actor of its changes (audit.go)
	p := &Panel{o: o, log: o.Logger, now: o.Now, pages: pages,
		throttle:  ratelimit.NewThrottle(ratelimit.ThrottleOptions{Name: "panel_sign_in", Burst: signInBurst, PerSecond: signInRate, Metrics: o.Limits}),
		dummyHash: sync.OnceValue(newDummyHash)}
	p.hub = newHub(o.State, o.MaxStreams, o.MaxStreamsPerAccount, o.Metrics, p.log)
	if o.SSO != nil {
		if p.sso, err = newSSO(*o.SSO, o.PublicURL, p.now); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Start watches the state for the live streams until Stop.
func (p *Panel) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.hub.run(ctx)
	}()
}

// Stop ends the watch and every live stream.
func (p *Panel) Stop() {
	if p.stop != nil {
		p.stop()
		p.wg.Wait()
	}
}

// refresh brings the node's copy up to date with the leader before a page
// is read; without a leader the page is read from this node's copy and
// says so.
func (p *Panel) refresh(r *http.Request) (stale bool) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := p.o.Cluster.ConsistentRead(ctx); err != nil {
		p.log.Debug("page read from this node's copy", "error", err)
		return true
	}
	return false
}
