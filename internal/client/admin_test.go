package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"lookout/cluster"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/controltest"
	"lookout/control/state"
	"lookout/internal/apikey"
	"lookout/internal/client"
)

func ptr[T any](v T) *T { return &v }

// newAdmin returns a client of a fresh operator API.
func newAdmin(t *testing.T) (*client.Admin, *controltest.Server) {
	t.Helper()
	srv := controltest.NewServer(t)
	return client.NewAdmin(srv.URL+"/", controltest.Token, nil), srv
}

func TestAccounts(t *testing.T) {
	ctx := context.Background()
	c, srv := newAdmin(t)
	created, err := c.CreateAccount(ctx, client.CreateAccountRequest{
		Email: "ops@example.com", Password: "hunter2hunter2",
		Plan: &client.PlanRequest{Name: ptr("pro"), MonitorLimit: ptr(int64(50))},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := client.Plan{Name: "pro", MonitorLimit: ptr(int64(50)), QuotaGraceSeconds: 259200, ConfigAsCode: true, IngestRatePerSecond: 10, IngestBurst: 20, MonitorsCreatedPerMinute: 60}
	if !reflect.DeepEqual(created.Plan, want) || !strings.HasPrefix(created.IngestKey, apikey.Ingest) || !strings.HasPrefix(created.ManagementKey, apikey.Management) {
		t.Errorf("created %+v", created)
	}

	for _, stale := range []bool{false, true} {
		got, err := c.GetAccount(ctx, created.ID, stale)
		if err != nil {
			t.Fatal(err)
		}
		wantUsage := client.Usage{PeriodResetsAt: time.Date(2026, time.April, 1, 0, 0, 0, 0, time.UTC)}
		if got.ID != created.ID || got.Email != "ops@example.com" || !reflect.DeepEqual(got.Plan, want) ||
			!got.Usage.PeriodResetsAt.Equal(wantUsage.PeriodResetsAt) || !got.CreatedAt.Equal(srv.Now) {
			t.Errorf("stale=%v: got %+v", stale, got)
		}
	}
	if srv.Cluster.Reads() != 1 {
		t.Errorf("%d consistent reads, want 1 (the stale read makes none)", srv.Cluster.Reads())
	}

	plan, err := c.SetPlan(ctx, created.ID, client.PlanRequest{MonthlyEventLimit: ptr(int64(1000)), ConfigAsCode: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	want = client.Plan{Name: "default", MonthlyEventLimit: ptr(int64(1000)), QuotaGraceSeconds: 259200, IngestRatePerSecond: 10, IngestBurst: 20, MonitorsCreatedPerMinute: 60}
	if !reflect.DeepEqual(*plan, want) {
		t.Errorf("plan %+v, want %+v", *plan, want)
	}
}

func TestKeys(t *testing.T) {
	ctx := context.Background()
	c, srv := newAdmin(t)
	acct, err := c.CreateAccount(ctx, client.CreateAccountRequest{Email: "ops@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	ingest, err := c.CreateKey(ctx, acct.ID, client.CreateKeyRequest{Type: client.KeyTypeIngest, Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	if ingest.Type != "ingest" || ingest.Name != "ci" || len(ingest.Scopes) != 0 || !strings.HasPrefix(ingest.Key, apikey.Ingest) {
		t.Errorf("ingest key %+v", ingest)
	}
	mgmt, err := c.CreateKey(ctx, acct.ID, client.CreateKeyRequest{Type: client.KeyTypeManagement, Name: "ro", Scopes: []string{client.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mgmt.Scopes, []string{"read"}) {
		t.Errorf("scopes %v", mgmt.Scopes)
	}
	if err := c.RevokeKey(ctx, acct.ID, mgmt.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Store.KeyByHash(apikey.Hash(mgmt.Key)); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("revoked key: %v", err)
	}
	err = c.RevokeKey(ctx, acct.ID, mgmt.ID)
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound || apiErr.Code != "not_found" {
		t.Errorf("second revoke: %v, want a 404 APIError", err)
	}
}

func TestGroupsAndAgentTokens(t *testing.T) {
	ctx := context.Background()
	c, _ := newAdmin(t)
	acct, err := c.CreateAccount(ctx, client.CreateAccountRequest{Email: "ops@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	channels := []client.Channel{
		{Type: "slack", Name: "#ops", Config: json.RawMessage(`{"webhook_url":"https://hooks.example.com/x"}`)},
		{Type: "pagerduty", Config: json.RawMessage(`{"routing_key":"R0UT1NG"}`)},
	}
	g, err := c.CreateNotificationGroup(ctx, acct.ID, client.CreateNotificationGroupRequest{Name: "on-call", Channels: channels})
	if err != nil {
		t.Fatal(err)
	}
	if g.ID == "" || g.Name != "on-call" || !reflect.DeepEqual(g.Channels, channels) {
		t.Errorf("group %+v", g)
	}
	empty, err := c.CreateNotificationGroup(ctx, acct.ID, client.CreateNotificationGroupRequest{Name: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if empty.Channels == nil || len(empty.Channels) != 0 {
		t.Errorf("channels %#v, want empty", empty.Channels)
	}

	tok, err := c.CreateAgentToken(ctx, client.CreateAgentTokenRequest{Region: "eu-west", Name: "fra"})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Region != "eu-west" || tok.Name != "fra" || !strings.HasPrefix(tok.Token, apikey.Agent) {
		t.Errorf("token %+v", tok)
	}
}

func TestChannels(t *testing.T) {
	ctx := context.Background()
	c, srv := newAdmin(t)
	acct, err := c.CreateAccount(ctx, client.CreateAccountRequest{Email: "ops@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	rx := channeltest.NewReceiver(t)
	ch, err := c.CreateChannel(ctx, acct.ID, client.CreateChannelRequest{
		Type: "discord", Name: "alerts", Config: json.RawMessage(`{"webhook_url":"https://discord.com/api/webhooks/1/x","api_url":"` + rx.URL + `"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if ch.ID == "" || ch.Type != "discord" || ch.Name != "alerts" || !ch.Default || !strings.Contains(string(ch.Config), rx.URL) {
		t.Errorf("channel %+v", ch)
	}
	hook, err := c.CreateChannel(ctx, acct.ID, client.CreateChannelRequest{
		Type: "webhook", Name: "ci", Config: json.RawMessage(`{"url":"https://example.com/hook"}`), Default: ptr(false),
	})
	if err != nil {
		t.Fatal(err)
	}
	if hook.Default || !strings.Contains(string(hook.Config), `"secret":"whsec_`) {
		t.Errorf("channel %+v %s", hook, hook.Config)
	}
	if stored, err := srv.Store.Channels(acct.ID); err != nil || len(stored) != 2 {
		t.Errorf("stored %v, %v", stored, err)
	}

	res, err := c.TestChannel(ctx, acct.ID, ch.ID)
	if err != nil || !res.Delivered {
		t.Fatalf("test: %+v, %v", res, err)
	}
	if body := string(rx.Last(t).Body); !strings.Contains(body, "lookout-test") {
		t.Errorf("sent %s", body)
	}
	rx.Respond(http.StatusServiceUnavailable, "")
	_, err = c.TestChannel(ctx, acct.ID, ch.ID)
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadGateway || apiErr.Code != "delivery_failed" {
		t.Errorf("test of a failing receiver: %v", err)
	}
	_, err = c.CreateChannel(ctx, acct.ID, client.CreateChannelRequest{Type: "slack", Name: "x", Config: json.RawMessage(`{"webhook_url":"nope"}`)})
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || !strings.Contains(apiErr.Message, "config.webhook_url") {
		t.Errorf("invalid config: %v", err)
	}
}

func TestClusterStatus(t *testing.T) {
	c, srv := newAdmin(t)
	srv.Cluster.SetStatus(cluster.Status{Leader: "a", Nodes: []cluster.ServerStatus{
		{ID: "a", HTTPAddr: "h", RaftAddr: "r", Role: "leader", Voter: true, AppliedIndex: 3},
	}})
	got, err := c.ClusterStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := &client.ClusterStatus{Leader: "a", Nodes: []client.ClusterNode{{ID: "a", HTTPAddr: "h", RaftAddr: "r", Role: "leader", Voter: true, AppliedIndex: 3}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	c, srv := newAdmin(t)
	tests := []struct {
		name   string
		call   func() error
		status int
		code   string
		msg    string
	}{
		{"invalid", func() error {
			_, err := c.CreateAccount(ctx, client.CreateAccountRequest{Email: "nope"})
			return err
		}, 400, "invalid_request", "invalid field: email"},
		{"not found", func() error {
			_, err := c.GetAccount(ctx, "missing", false)
			return err
		}, 404, "not_found", "account missing not found"},
		{"unauthenticated", func() error {
			_, err := client.NewAdmin(srv.URL, "wrong", nil).ClusterStatus(ctx)
			return err
		}, 401, "unauthenticated", "invalid operator token"},
		{"unavailable", func() error {
			srv.Cluster.FailApply(fmt.Errorf("wait: %w", cluster.ErrNoLeader))
			defer srv.Cluster.FailApply(nil)
			_, err := c.CreateAgentToken(ctx, client.CreateAgentTokenRequest{Region: "eu", Name: "x"})
			return err
		}, 503, "unavailable", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var apiErr *client.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v (%T), want *client.APIError", err, err)
			}
			if apiErr.Status != tt.status || apiErr.Code != tt.code || !strings.HasPrefix(apiErr.Message, tt.msg) {
				t.Errorf("got %+v, want %d %s %q", apiErr, tt.status, tt.code, tt.msg)
			}
		})
	}
}

// Bodies of other shapes (a proxy's text page, the Ingest API's {"error"})
// still make an APIError.
func TestOtherErrorBodies(t *testing.T) {
	tests := []struct {
		body       string
		code, msg  string
		statusCode int
	}{
		{"upstream down\n", "", "upstream down", 502},
		{"", "", "Bad Gateway", 502},
		{`{"error":"unauthorized"}`, "", "unauthorized", 401},
		{`{"message":"need delete","error_code":"insufficient_scope"}`, "insufficient_scope", "need delete", 403},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tt.statusCode)
			fmt.Fprint(w, tt.body)
		}))
		_, err := client.NewAdmin(srv.URL, "t", srv.Client()).ClusterStatus(context.Background())
		srv.Close()
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != tt.statusCode || apiErr.Code != tt.code || apiErr.Message != tt.msg {
			t.Errorf("body %q: got %v, want %d %q %q", tt.body, err, tt.statusCode, tt.code, tt.msg)
		}
	}
}

// ListAccounts pages; AllAccounts follows the cursors to the end.
func TestListAccounts(t *testing.T) {
	ctx := context.Background()
	c, _ := newAdmin(t)
	for i := range 3 {
		if _, err := c.CreateAccount(ctx, client.CreateAccountRequest{Email: fmt.Sprintf("u%d@example.com", i)}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := c.ListAccounts(ctx, client.AccountListOptions{Limit: 2})
	if err != nil || len(page.Accounts) != 2 || page.NextCursor == "" {
		t.Fatalf("first page %+v, %v", page, err)
	}
	rest, err := c.ListAccounts(ctx, client.AccountListOptions{Limit: 2, Cursor: page.NextCursor, Stale: true})
	if err != nil || len(rest.Accounts) != 1 || rest.NextCursor != "" || rest.Accounts[0].ID <= page.Accounts[1].ID {
		t.Fatalf("second page %+v, %v", rest, err)
	}
	all, err := c.AllAccounts(ctx, false)
	if err != nil || len(all) != 3 || all[0].Email == "" || all[0].Plan.Name != "default" {
		t.Fatalf("all %+v, %v", all, err)
	}
}
