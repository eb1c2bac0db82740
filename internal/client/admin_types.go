package client

import (
	"encoding/json"
	"time"
)

// The key types and management scopes.
const (
	KeyTypeIngest     = "ingest"
	KeyTypeManagement = "management"
	ScopeRead         = "read"
	ScopeWrite        = "write"
	ScopeDelete       = "delete"
)

// Plan is an account's plan. A nil limit is no limit.
type Plan struct {
	Name                string  `json:"name"`
	MonitorLimit        *int64  `json:"monitor_limit"`
	MonthlyEventLimit   *int64  `json:"monthly_event_limit"`
	QuotaGraceSeconds   int64   `json:"quota_grace_seconds"`
	ConfigAsCode        bool    `json:"config_as_code"`
	IngestRatePerSecond float64 `json:"ingest_rate_per_second"`
	IngestBurst         int64   `json:"ingest_burst"`
	// MonitorsCreatedPerMinute caps the ping monitors pings may create in
	// one minute.
	MonitorsCreatedPerMinute int64 `json:"monitors_created_per_minute"`
}

// PlanRequest is a plan to set; nil fields take the service's defaults
// (name "default", no limits, 259200 s of grace, config as code on,
// 10 events/s with a burst of 20, 60 monitors created by pings a minute).
type PlanRequest struct {
	Name                *string  `json:"name,omitempty"`
	MonitorLimit        *int64   `json:"monitor_limit,omitempty"`
	MonthlyEventLimit   *int64   `json:"monthly_event_limit,omitempty"`
	QuotaGraceSeconds   *int64   `json:"quota_grace_seconds,omitempty"`
	ConfigAsCode        *bool    `json:"config_as_code,omitempty"`
	IngestRatePerSecond *float64 `json:"ingest_rate_per_second,omitempty"`
	IngestBurst         *int64   `json:"ingest_burst,omitempty"`
	// MonitorsCreatedPerMinute is 1 to 100000.
	MonitorsCreatedPerMinute *int64 `json:"monitors_created_per_minute,omitempty"`
}

// CreateAccountRequest asks for an account. Password is optional (at least
// 8 characters when set); a nil Plan is the default plan.
type CreateAccountRequest struct {
	Email    string       `json:"email"`
	Password string       `json:"password,omitempty"`
	Plan     *PlanRequest `json:"plan,omitempty"`
}

// CreatedAccount is a new account with its personal keys, shown only once.
type CreatedAccount struct {
	ID            string `json:"id"`
	Email         string `json:"email"`
	Plan          Plan   `json:"plan"`
	IngestKey     string `json:"ingest_key"`
	ManagementKey string `json:"management_key"`
}

// Account is an account as the operator API shows it.
type Account struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Plan      Plan      `json:"plan"`
	Usage     Usage     `json:"usage"`
	CreatedAt time.Time `json:"created_at"`
}

// AccountSummary is an account as GET /admin/v1/accounts lists it.
type AccountSummary struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Plan      Plan      `json:"plan"`
	CreatedAt time.Time `json:"created_at"`
}

// AccountPage is one page of GET /admin/v1/accounts, in id order.
type AccountPage struct {
	Accounts []AccountSummary `json:"accounts"`
	// NextCursor is set while more accounts follow; pass it as
	// AccountListOptions.Cursor.
	NextCursor string `json:"next_cursor,omitempty"`
}

// AccountListOptions narrows GET /admin/v1/accounts.
type AccountListOptions struct {
	// Limit is the page size, 1 to 1000; 0 is the service's 100.
	Limit int
	// Cursor is the NextCursor of the previous page.
	Cursor string
	// Stale answers from the node's own copy, even without a leader.
	Stale bool
}

// Usage is what an account used in the current period (a UTC calendar
// month).
type Usage struct {
	Monitors         int64     `json:"monitors"`
	EventsThisPeriod int64     `json:"events_this_period"`
	PeriodResetsAt   time.Time `json:"period_resets_at"`
}

// CreateKeyRequest asks for a named key. Scopes are for management keys
// only; nil means all three.
type CreateKeyRequest struct {
	Type   string   `json:"type"`
	Name   string   `json:"name"`
	Scopes []string `json:"scopes,omitempty"`
}

// CreatedKey is a new key; Key is the secret, shown only once.
type CreatedKey struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Scopes []string `json:"scopes"`
	Key    string   `json:"key"`
}

// KeyInfo is a key as GET /admin/v1/accounts/{id}/keys lists it: never its
// secret.
type KeyInfo struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Type      string    `json:"type"`
	Scopes    []string  `json:"scopes"`
	CreatedAt time.Time `json:"created_at"`
	// LastUsedAt is the last use recorded, to the hour; nil until the key
	// is used.
	LastUsedAt *time.Time `json:"last_used_at"`
}

// Channel is one alert channel of a notification group: a channel of its
// own (Type one of email, slack, discord, teams, pagerduty, opsgenie,
// telegram, webhook, with its Name and Config), or an alert channel of the
// account named by ChannelID alone.
type Channel struct {
	Type      string          `json:"type,omitempty"`
	Name      string          `json:"name,omitempty"`
	Config    json.RawMessage `json:"config,omitempty"`
	ChannelID string          `json:"channel_id,omitempty"`
}

// CreateNotificationGroupRequest asks for a notification group.
type CreateNotificationGroupRequest struct {
	Name     string    `json:"name"`
	Channels []Channel `json:"channels"`
}

// NotificationGroup is a named set of alert channels. Read back, the
// secrets of its channels are masked.
type NotificationGroup struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Channels  []Channel `json:"channels"`
	CreatedAt string    `json:"created_at,omitempty"`
}

// CreateChannelRequest asks for an alert channel of an account. A nil
// Default is true: the channel gets the alerts of monitors without a
// notification group.
type CreateChannelRequest struct {
	Type    string          `json:"type"`
	Name    string          `json:"name"`
	Config  json.RawMessage `json:"config,omitempty"`
	Default *bool           `json:"default,omitempty"`
}

// CreatedChannel is a new alert channel. Config is as stored: a webhook
// secret the service made is shown only here.
type CreatedChannel struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Name    string          `json:"name"`
	Default bool            `json:"default"`
	Config  json.RawMessage `json:"config"`
}

// ChannelTest is the answer of a test message that reached the receiver.
type ChannelTest struct {
	Delivered bool `json:"delivered"`
}

// CreateAgentTokenRequest asks for a token for the agents of a region.
type CreateAgentTokenRequest struct {
	Region string `json:"region"`
	Name   string `json:"name"`
	// Accounts, when set, are the only accounts the token's agents serve;
	// empty: every account.
	Accounts []string `json:"accounts,omitempty"`
}

// CreatedAgentToken is a new agent token; Token is shown only once.
type CreatedAgentToken struct {
	ID     string `json:"id"`
	Region string `json:"region"`
	Name   string `json:"name"`
	// Accounts are the accounts it serves, sorted; empty: every account.
	Accounts []string `json:"accounts,omitempty"`
	// Replaces is the id of the token a rotation made this one for.
	Replaces string `json:"replaces,omitempty"`
	Token    string `json:"token"`
}

// AgentTokenList is the live agent tokens, by region, then name.
type AgentTokenList struct {
	Tokens []AgentToken `json:"tokens"`
}

// AgentToken is an agent token as listed: never its secret.
type AgentToken struct {
	ID       string   `json:"id"`
	Region   string   `json:"region"`
	Name     string   `json:"name"`
	Accounts []string `json:"accounts,omitempty"`
	// CreatedAt is when it was made; ValidFrom the earliest receipt time
	// of an event its agents may forward (that of the first token it was
	// rotated from, if any); Replaces the token it was rotated from.
	CreatedAt time.Time `json:"created_at"`
	ValidFrom time.Time `json:"valid_from"`
	Replaces  string    `json:"replaces,omitempty"`
}

// ClusterStatus is the control-plane cluster as one node sees it.
type ClusterStatus struct {
	// Leader is the leader's node id, empty when there is none.
	Leader string        `json:"leader"`
	Nodes  []ClusterNode `json:"nodes"`
}

// ClusterNode is one node of the cluster. Role is leader, follower,
// candidate or gone.
type ClusterNode struct {
	ID            string `json:"id"`
	HTTPAddr      string `json:"http_addr"`
	RaftAddr      string `json:"raft_addr"`
	Role          string `json:"role"`
	Voter         bool   `json:"voter"`
	LastContactMs int64  `json:"last_contact_ms"`
	AppliedIndex  uint64 `json:"applied_index"`
}

// AgentList is GET /admin/v1/agents: every agent the control plane has
// heard of, and the leader's verdicts on their regions.
type AgentList struct {
	Agents  []Agent       `json:"agents"`
	Regions []AgentRegion `json:"regions"`
}

// Agent is one edge agent as the control plane last heard of it.
type Agent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// TokenID is the agent token it last called with.
	TokenID         string    `json:"token_id"`
	Region          string    `json:"region"`
	Version         string    `json:"version"`
	Connected       bool      `json:"connected"`
	LastSeen        time.Time `json:"last_seen"`
	BufferedEvents  int64     `json:"buffered_events"`
	BufferedResults int64     `json:"buffered_results"`
}

// AgentRegion is the leader's verdict on an agent region: online or
// offline, since when.
type AgentRegion struct {
	Name  string    `json:"name"`
	State string    `json:"state"`
	Since time.Time `json:"since"`
}
