package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
)

// Admin calls the operator API, /admin/v1, with the operator token.
type Admin struct {
	t transport
}

// NewAdmin returns a client of the operator API at baseURL (for example
// http://127.0.0.1:8080). A nil httpClient means one with a 30 s timeout.
func NewAdmin(baseURL, token string, httpClient *http.Client) *Admin {
	return &Admin{t: newTransport(baseURL, token, httpClient)}
}

// CreateAccount creates an account with its personal ingest and management
// keys.
func (a *Admin) CreateAccount(ctx context.Context, req CreateAccountRequest) (*CreatedAccount, error) {
	var out CreatedAccount
	if err := a.t.do(ctx, http.MethodPost, "/admin/v1/accounts", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetAccount returns an account. A stale read answers from the node's own
// copy, even when the cluster has no leader, and may miss recent writes.
func (a *Admin) GetAccount(ctx context.Context, id string, stale bool) (*Account, error) {
	path := "/admin/v1/accounts/" + url.PathEscape(id)
	if stale {
		path += "?stale=true"
	}
	var out Account
	if err := a.t.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListAccounts returns one page of accounts, in id order.
func (a *Admin) ListAccounts(ctx context.Context, opts AccountListOptions) (*AccountPage, error) {
	q := url.Values{}
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.Cursor != "" {
		q.Set("cursor", opts.Cursor)
	}
	if opts.Stale {
		q.Set("stale", "true")
	}
	path := "/admin/v1/accounts"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out AccountPage
	if err := a.t.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AllAccounts returns every account, page by page, following next_cursor.
func (a *Admin) AllAccounts(ctx context.Context, stale bool) ([]AccountSummary, error) {
	out := []AccountSummary{}
	opts := AccountListOptions{Limit: 1000, Stale: stale}
	for {
		page, err := a.ListAccounts(ctx, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Accounts...)
		if page.NextCursor == "" {
			return out, nil
		}
		if page.NextCursor == opts.Cursor {
			return nil, errors.New("GET /admin/v1/accounts: the answer repeats its cursor")
		}
		opts.Cursor = page.NextCursor
	}
}

// SetPlan replaces an account's plan; fields left nil take their defaults.
func (a *Admin) SetPlan(ctx context.Context, accountID string, plan PlanRequest) (*Plan, error) {
	var out struct {
		Plan Plan `json:"plan"`
	}
	if err := a.t.do(ctx, http.MethodPut, "/admin/v1/accounts/"+url.PathEscape(accountID)+"/plan", plan, &out); err != nil {
		return nil, err
	}
	return &out.Plan, nil
}

// SetPassword replaces an account's panel password ("" removes it).
func (a *Admin) SetPassword(ctx context.Context, accountID, password string) error {
	body := struct {
		Password string `json:"password"`
	}{password}
	return a.t.do(ctx, http.MethodPut, "/admin/v1/accounts/"+url.PathEscape(accountID)+"/password", body, nil)
}

// CreateKey adds a named ingest or management key to an account.
func (a *Admin) CreateKey(ctx context.Context, accountID string, req CreateKeyRequest) (*CreatedKey, error) {
	var out CreatedKey
	if err := a.t.do(ctx, http.MethodPost, "/admin/v1/accounts/"+url.PathEscape(accountID)+"/keys", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RevokeKey revokes a key of an account; it stops working at once.
func (a *Admin) RevokeKey(ctx context.Context, accountID, keyID string) error {
	path := "/admin/v1/accounts/" + url.PathEscape(accountID) + "/keys/" + url.PathEscape(keyID)
	return a.t.do(ctx, http.MethodDelete, path, nil, nil)
}

// ListKeys returns an account's keys with when each was made and last
// used. A stale read answers from the node's own copy.
func (a *Admin) ListKeys(ctx context.Context, accountID string, stale bool) ([]KeyInfo, error) {
	path := "/admin/v1/accounts/" + url.PathEscape(accountID) + "/keys"
	if stale {
		path += "?stale=true"
	}
	var out struct {
		Keys []KeyInfo `json:"keys"`
	}
	if err := a.t.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// CreateNotificationGroup adds a notification group to an account.
func (a *Admin) CreateNotificationGroup(ctx context.Context, accountID string, req CreateNotificationGroupRequest) (*NotificationGroup, error) {
	if req.Channels == nil {
		req.Channels = []Channel{}
	}
	var out NotificationGroup
	if err := a.t.do(ctx, http.MethodPost, "/admin/v1/accounts/"+url.PathEscape(accountID)+"/notification-groups", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateChannel adds an alert channel to an account. The config is
// validated as it is saved; a webhook without a secret gets one.
func (a *Admin) CreateChannel(ctx context.Context, accountID string, req CreateChannelRequest) (*CreatedChannel, error) {
	var out CreatedChannel
	if err := a.t.do(ctx, http.MethodPost, "/admin/v1/accounts/"+url.PathEscape(accountID)+"/channels", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TestChannel sends a test message through a channel of an account. A
// receiver that does not take it is an *APIError with status 502 and code
// delivery_failed, whose message says why.
func (a *Admin) TestChannel(ctx context.Context, accountID, channelID string) (*ChannelTest, error) {
	path := "/admin/v1/accounts/" + url.PathEscape(accountID) + "/channels/" + url.PathEscape(channelID) + "/test"
	var out ChannelTest
	if err := a.t.do(ctx, http.MethodPost, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateAgentToken makes a token for the agents of a region.
func (a *Admin) CreateAgentToken(ctx context.Context, req CreateAgentTokenRequest) (*CreatedAgentToken, error) {
	var out CreatedAgentToken
	if err := a.t.do(ctx, http.MethodPost, "/admin/v1/agent-tokens", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AgentTokens lists the live agent tokens (never their secrets).
func (a *Admin) AgentTokens(ctx context.Context) (*AgentTokenList, error) {
	var out AgentTokenList
	if err := a.t.do(ctx, http.MethodGet, "/admin/v1/agent-tokens", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RotateAgentToken makes a new token of the same region, name and
// accounts as the token with id, whose agents may forward what the old
// token's buffered; the old token stays valid until it is revoked.
func (a *Admin) RotateAgentToken(ctx context.Context, id string) (*CreatedAgentToken, error) {
	var out CreatedAgentToken
	if err := a.t.do(ctx, http.MethodPost, "/admin/v1/agent-tokens/"+url.PathEscape(id)+"/rotate", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Agents lists the edge agents and the verdicts on their regions. It
// works without a leader.
func (a *Admin) Agents(ctx context.Context) (*AgentList, error) {
	var out AgentList
	if err := a.t.do(ctx, http.MethodGet, "/admin/v1/agents", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ForgetAgent removes an agent's record by its id (an *APIError with
// status 404 when there is none); a region left without agents is no
// longer judged.
func (a *Admin) ForgetAgent(ctx context.Context, id string) error {
	return a.t.do(ctx, http.MethodDelete, "/admin/v1/agents/"+url.PathEscape(id), nil, nil)
}

// RevokeAgentToken revokes an agent token by its id: its agents are
// refused within seconds.
func (a *Admin) RevokeAgentToken(ctx context.Context, id string) error {
	return a.t.do(ctx, http.MethodDelete, "/admin/v1/agent-tokens/"+url.PathEscape(id), nil, nil)
}

// ClusterStatus returns the cluster as the node that answers sees it. It
// works without a leader.
func (a *Admin) ClusterStatus(ctx context.Context) (*ClusterStatus, error) {
	var out ClusterStatus
	if err := a.t.do(ctx, http.MethodGet, "/admin/v1/cluster", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
