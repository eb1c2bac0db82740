package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"lookout/control/alert/channel/channeltest"
	"lookout/control/controltest"
	"lookout/control/state"
	"lookout/internal/apikey"
	"lookout/internal/client"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// adminEnv is the environment of a test run against srv.
func adminEnv(srv *controltest.Server) func(string) string {
	env := map[string]string{"LOOKOUT_ADDR": srv.URL, "LOOKOUT_ADMIN_TOKEN": controltest.Token}
	return func(k string) string { return env[k] }
}

// runAdminTest runs lookout admin args and returns stdout.
func runAdminTest(t *testing.T, getenv func(string) string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := runAdminEnv(context.Background(), args, getenv, &stdout, &stderr)
	return stdout.String(), err
}

// mustRunAdmin runs lookout admin args against srv and decodes stdout into out.
func mustRunAdmin(t *testing.T, srv *controltest.Server, out any, args ...string) {
	t.Helper()
	stdout, err := runAdminTest(t, adminEnv(srv), args...)
	if err != nil {
		t.Fatalf("lookout admin %v: %v", args, err)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(stdout), out); err != nil {
			t.Fatalf("lookout admin %v printed %q: %v", args, stdout, err)
		}
	}
}

func TestAdminAccounts(t *testing.T) {
	srv := controltest.NewServer(t)
	var created client.CreatedAccount
	mustRunAdmin(t, srv, &created, "account", "create", "--email", "ops@example.com", "--password", "s3cret-pass",
		"--plan-name", "pro", "--plan-monitor-limit", "25", "--plan-config-as-code=false", "--plan-ingest-rate", "2.5")
	limit := int64(25)
	want := client.Plan{Name: "pro", MonitorLimit: &limit, QuotaGraceSeconds: 259200, IngestRatePerSecond: 2.5, IngestBurst: 20, MonitorsCreatedPerMinute: 60}
	if !reflect.DeepEqual(created.Plan, want) || !strings.HasPrefix(created.ManagementKey, apikey.Management) {
		t.Errorf("created %+v", created)
	}

	// Flags may follow the account id.
	var got client.Account
	mustRunAdmin(t, srv, &got, "account", "get", created.ID, "--stale")
	if got.ID != created.ID || got.Email != "ops@example.com" || srv.Cluster.Reads() != 0 {
		t.Errorf("got %+v after %d consistent reads", got, srv.Cluster.Reads())
	}
	mustRunAdmin(t, srv, &got, "account", "get", created.ID)
	if srv.Cluster.Reads() != 1 {
		t.Errorf("%d consistent reads, want 1", srv.Cluster.Reads())
	}

	var set struct{ Plan client.Plan }
	mustRunAdmin(t, srv, &set, "plan", "set", created.ID, "--plan-monitors-created-per-minute", "7")
	if set.Plan.MonitorsCreatedPerMinute != 7 {
		t.Errorf("plan %+v, want 7 monitors created a minute", set.Plan)
	}
	mustRunAdmin(t, srv, &set, "plan", "set", created.ID, "--plan-ingest-burst", "5")
	want = client.Plan{Name: "default", QuotaGraceSeconds: 259200, ConfigAsCode: true, IngestRatePerSecond: 10, IngestBurst: 5, MonitorsCreatedPerMinute: 60}
	if !reflect.DeepEqual(set.Plan, want) {
		t.Errorf("plan %+v, want %+v", set.Plan, want)
	}
}

func TestAdminKeys(t *testing.T) {
	srv := controltest.NewServer(t)
	var acct client.CreatedAccount
	mustRunAdmin(t, srv, &acct, "account", "create", "--email", "ops@example.com")
	var key client.CreatedKey
	mustRunAdmin(t, srv, &key, "key", "create", "--account", acct.ID, "--type", "management", "--name", "ci", "--scopes", "write, read")
	if !reflect.DeepEqual(key.Scopes, []string{"read", "write"}) || !strings.HasPrefix(key.Key, apikey.Management) {
		t.Errorf("key %+v", key)
	}
	var listed struct{ Keys []client.KeyInfo }
	mustRunAdmin(t, srv, &listed, "key", "list", "--account", acct.ID)
	names := map[string]bool{}
	for _, k := range listed.Keys {
		names[k.Name] = k.CreatedAt.Equal(srv.Now) && k.LastUsedAt == nil
	}
	if len(listed.Keys) != 3 || !names["ci"] || !names["default"] || !names["personal"] {
		t.Errorf("key list: %+v", listed.Keys)
	}
	stdout, err := runAdminTest(t, adminEnv(srv), "key", "revoke", "--account", acct.ID, key.ID)
	if err != nil || stdout != "" {
		t.Fatalf("revoke: %q, %v", stdout, err)
	}
	if _, err := srv.Store.KeyByHash(apikey.Hash(key.Key)); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("revoked key: %v", err)
	}
	_, err = runAdminTest(t, adminEnv(srv), "key", "revoke", "--account", acct.ID, key.ID)
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound || ExitCode(err) != 1 {
		t.Errorf("second revoke: %v, want a 404 APIError", err)
	}
}

func TestAdminGroupsTokensCluster(t *testing.T) {
	srv := controltest.NewServer(t)
	var acct client.CreatedAccount
	mustRunAdmin(t, srv, &acct, "account", "create", "--email", "ops@example.com")
	var g client.NotificationGroup
	mustRunAdmin(t, srv, &g, "group", "create", "--account", acct.ID, "--name", "on-call",
		"--channels", `[{"type":"opsgenie","config":{"api_key":"k","region":"eu"}}]`)
	if g.Name != "on-call" || len(g.Channels) != 1 || g.Channels[0].Type != "opsgenie" {
		t.Errorf("group %+v", g)
	}
	mustRunAdmin(t, srv, &g, "group", "create", "--account", acct.ID, "--name", "empty")
	if len(g.Channels) != 0 {
		t.Errorf("group %+v, want no channels", g)
	}

	var tok client.CreatedAgentToken
	mustRunAdmin(t, srv, &tok, "agent-token", "create", "--region", "eu-west", "--name", "fra")
	if tok.Region != "eu-west" || !strings.HasPrefix(tok.Token, apikey.Agent) || len(tok.Accounts) != 0 {
		t.Errorf("token %+v", tok)
	}
	var scoped client.CreatedAgentToken
	mustRunAdmin(t, srv, &scoped, "agent-token", "create", "--region", "eu-west", "--name", "tenant", "--accounts", acct.ID)
	if stored, err := srv.Store.AgentTokenByHash(apikey.Hash(scoped.Token)); err != nil || len(scoped.Accounts) != 1 || len(stored.GetAccounts()) != 1 || stored.GetAccounts()[0] != acct.ID {
		t.Errorf("a token of %s: %+v, stored %v %v", acct.ID, scoped, stored, err)
	}
	var rotated client.CreatedAgentToken
	mustRunAdmin(t, srv, &rotated, "agent-token", "rotate", scoped.ID)
	if rotated.Replaces != scoped.ID || rotated.ID == scoped.ID || rotated.Region != "eu-west" || rotated.Name != "tenant" ||
		len(rotated.Accounts) != 1 || rotated.Accounts[0] != acct.ID || !strings.HasPrefix(rotated.Token, apikey.Agent) {
		t.Errorf("rotated %+v from %+v", rotated, scoped)
	}
	var tokens client.AgentTokenList
	mustRunAdmin(t, srv, &tokens, "agent-token", "list")
	if len(tokens.Tokens) != 3 || tokens.Tokens[0].Name != "fra" || !slices.ContainsFunc(tokens.Tokens, func(l client.AgentToken) bool {
		return l.ID == rotated.ID && l.Replaces == scoped.ID && !l.ValidFrom.IsZero()
	}) {
		t.Errorf("tokens %+v", tokens)
	}
	if stdout, err := runAdminTest(t, adminEnv(srv), "agent-token", "revoke", tok.ID); err != nil || stdout != "" {
		t.Fatalf("revoke agent token: %q, %v", stdout, err)
	}
	if _, err := srv.Store.AgentTokenByHash(apikey.Hash(tok.Token)); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("revoked agent token: %v", err)
	}
	var apiErr *client.APIError
	if _, err := runAdminTest(t, adminEnv(srv), "agent-token", "revoke", tok.ID); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Errorf("second agent token revoke: %v, want a 404 APIError", err)
	}

	var agents client.AgentList
	mustRunAdmin(t, srv, &agents, "agent", "list")
	if agents.Agents == nil || len(agents.Agents) != 0 || agents.Regions == nil {
		t.Errorf("agents %+v", agents)
	}
	srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordAgentSeen{RecordAgentSeen: &raftv1.RecordAgentSeen{
		AgentId: "ag-1", Region: "eu-west", Name: "fra-1", Version: "v1", Connected: true, BufferedResults: 2}}})
	mustRunAdmin(t, srv, &agents, "agent", "list")
	if len(agents.Agents) != 1 || agents.Agents[0].Name != "fra-1" || !agents.Agents[0].Connected || agents.Agents[0].BufferedResults != 2 || agents.Agents[0].LastSeen.IsZero() {
		t.Errorf("agents %+v", agents)
	}

	var st client.ClusterStatus
	mustRunAdmin(t, srv, &st, "cluster")
	if st.Leader != "node-1" || len(st.Nodes) != 1 {
		t.Errorf("cluster %+v", st)
	}
}

func TestAdminChannels(t *testing.T) {
	srv := controltest.NewServer(t)
	var acct client.CreatedAccount
	mustRunAdmin(t, srv, &acct, "account", "create", "--email", "ops@example.com")
	rx := channeltest.NewReceiver(t)
	var ch client.CreatedChannel
	mustRunAdmin(t, srv, &ch, "channel", "create", "--account", acct.ID, "--type", "teams", "--name", "ops",
		"--config", `{"webhook_url":"https://x.logic.azure.com/workflows/1?sig=s","api_url":"`+rx.URL+`"}`)
	if ch.ID == "" || ch.Type != "teams" || ch.Name != "ops" || !ch.Default {
		t.Errorf("channel %+v", ch)
	}
	var hook client.CreatedChannel
	mustRunAdmin(t, srv, &hook, "channel", "create", "--account", acct.ID, "--type", "webhook", "--name", "ci",
		"--config", `{"url":"https://example.com/hook"}`, "--default=false")
	var cfg struct{ URL, Secret string }
	if err := json.Unmarshal(hook.Config, &cfg); err != nil || hook.Default || !strings.HasPrefix(cfg.Secret, "whsec_") {
		t.Errorf("channel %+v %s", hook, hook.Config)
	}
	stored, err := srv.Store.Channels(acct.ID)
	if err != nil || len(stored) != 2 {
		t.Fatalf("stored %v, %v", stored, err)
	}

	var res client.ChannelTest
	mustRunAdmin(t, srv, &res, "channel", "test", ch.ID, "--account", acct.ID)
	if !res.Delivered || rx.Last(t).URI != "/workflows/1?sig=s" {
		t.Errorf("test %+v, sent to %s", res, rx.Last(t).URI)
	}
	rx.Respond(http.StatusBadRequest, `bad card`)
	_, err = runAdminTest(t, adminEnv(srv), "channel", "test", "--account", acct.ID, ch.ID)
	var apiErr *client.APIError
	// The receiver's status, never its answer.
	if !errors.As(err, &apiErr) || apiErr.Code != "delivery_failed" || !strings.Contains(err.Error(), "400 Bad Request") || strings.Contains(err.Error(), "bad card") {
		t.Errorf("err %v, want delivery_failed with the status and without the answer", err)
	}
	_, err = runAdminTest(t, adminEnv(srv), "channel", "create", "--account", acct.ID, "--type", "slack", "--name", "x", "--config", `{"webhook_url":"x"}`)
	if !errors.As(err, &apiErr) || apiErr.Code != "invalid_request" || !strings.Contains(err.Error(), "config.webhook_url") {
		t.Errorf("err %v, want invalid_request naming config.webhook_url", err)
	}
}

func TestAdminAddressAndToken(t *testing.T) {
	srv := controltest.NewServer(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		ok   bool
	}{
		{"flags", nil, []string{"--addr", srv.URL, "--admin-token", controltest.Token, "cluster"}, true},
		{"flags after the command", nil, []string{"cluster", "--addr", srv.URL, "--admin-token", controltest.Token}, true},
		{"command flag beats top flag", nil, []string{"--admin-token", "wrong", "--addr", srv.URL, "cluster", "--admin-token", controltest.Token}, true},
		{"env", map[string]string{"LOOKOUT_ADDR": srv.URL, "LOOKOUT_ADMIN_TOKEN": controltest.Token}, []string{"cluster"}, true},
		{"host:port", map[string]string{"LOOKOUT_ADDR": host, "LOOKOUT_ADMIN_TOKEN": controltest.Token}, []string{"cluster"}, true},
		{"flag beats env", map[string]string{"LOOKOUT_ADDR": srv.URL, "LOOKOUT_ADMIN_TOKEN": "wrong"}, []string{"--admin-token", controltest.Token, "cluster"}, true},
		{"wrong token", map[string]string{"LOOKOUT_ADDR": srv.URL, "LOOKOUT_ADMIN_TOKEN": "wrong"}, []string{"cluster"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runAdminTest(t, func(k string) string { return tt.env[k] }, tt.args...)
			if (err == nil) != tt.ok {
				t.Errorf("err %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestAdminUsageErrors(t *testing.T) {
	srv := controltest.NewServer(t)
	noToken := func(k string) string { return map[string]string{"LOOKOUT_ADDR": srv.URL}[k] }
	tests := []struct {
		name   string
		getenv func(string) string
		args   []string
		msg    string
	}{
		{"no command", adminEnv(srv), nil, "no command given"},
		{"unknown command", adminEnv(srv), []string{"account", "delete"}, `unknown command "account delete"`},
		{"unknown flag", adminEnv(srv), []string{"cluster", "--verbose"}, "flag provided but not defined"},
		{"missing id", adminEnv(srv), []string{"account", "get"}, "want 1 argument"},
		{"extra argument", adminEnv(srv), []string{"cluster", "now"}, "want 0 argument"},
		{"missing account", adminEnv(srv), []string{"key", "create", "--type", "ingest", "--name", "x"}, "--account is required"},
		{"bad channels", adminEnv(srv), []string{"group", "create", "--account", "a", "--name", "g", "--channels", "{"}, "--channels"},
		{"unknown channel field", adminEnv(srv), []string{"group", "create", "--account", "a", "--name", "g", "--channels", `[{"type":"email","to":"x"}]`}, "--channels"},
		{"channel without account", adminEnv(srv), []string{"channel", "create", "--type", "slack", "--name", "x", "--config", "{}"}, "--account is required"},
		{"channel bad config", adminEnv(srv), []string{"channel", "create", "--account", "a", "--type", "slack", "--name", "x", "--config", "[]"}, "--config must be a JSON object"},
		{"channel test without id", adminEnv(srv), []string{"channel", "test", "--account", "a"}, "want 1 argument"},
		{"channel test without account", adminEnv(srv), []string{"channel", "test", "c"}, "--account is required"},
		{"bad number", adminEnv(srv), []string{"plan", "set", "id", "--plan-ingest-burst", "many"}, "invalid value"},
		{"no token", noToken, []string{"cluster"}, "no operator token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runAdminTest(t, tt.getenv, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.msg) || ExitCode(err) != 2 {
				t.Errorf("err %v (exit %d), want a usage error with %q", err, ExitCode(err), tt.msg)
			}
		})
	}
}

func TestAdminAPIError(t *testing.T) {
	srv := controltest.NewServer(t)
	_, err := runAdminTest(t, adminEnv(srv), "account", "create", "--email", "not-an-address")
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "invalid_request" || !strings.Contains(err.Error(), "invalid field: email") {
		t.Errorf("err %v, want the API's invalid_request", err)
	}
}

func TestAdminHelp(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"-h"}, []string{"Usage: lookout admin", "account create", "agent-token create", "-admin-token"}},
		{[]string{"account", "create", "-h"}, []string{"Usage: lookout admin account create", "-email", "-plan-monitor-limit", "-addr"}},
		{[]string{"agent-token", "create", "-h"}, []string{"Usage: lookout admin agent-token create --region R --name N [--accounts ID[,ID]]", "-accounts"}},
		{[]string{"agent-token", "rotate", "-h"}, []string{"Usage: lookout admin agent-token rotate TOKEN_ID"}},
		{[]string{"key", "revoke", "--help"}, []string{"Usage: lookout admin key revoke --account ID KEY_ID"}},
		{[]string{"channel", "create", "-h"}, []string{"Usage: lookout admin channel create --account ID --type T --name N --config JSON [--default=false]", "-default"}},
		{[]string{"channel", "test", "-h"}, []string{"Usage: lookout admin channel test --account ID CHANNEL_ID"}},
	}
	for _, tt := range tests {
		stdout, err := runAdminTest(t, func(string) string { return "" }, tt.args...)
		if err != nil {
			t.Errorf("%v: %v", tt.args, err)
		}
		// Usage never shows the token of the environment.
		withToken, _ := runAdminTest(t, func(k string) string {
			return map[string]string{"LOOKOUT_ADMIN_TOKEN": "s3cret-token"}[k]
		}, tt.args...)
		if strings.Contains(withToken, "s3cret-token") {
			t.Errorf("%v: usage shows the token:\n%s", tt.args, withToken)
		}
		for _, w := range tt.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%v: usage lacks %q:\n%s", tt.args, w, stdout)
			}
		}
	}
}

func TestAdminAccountPassword(t *testing.T) {
	srv := controltest.NewServer(t)
	var created client.CreatedAccount
	mustRunAdmin(t, srv, &created, "account", "create", "--email", "pw@example.com")
	var out struct {
		ID          string `json:"id"`
		PasswordSet bool   `json:"password_set"`
	}
	mustRunAdmin(t, srv, &out, "account", "password", created.ID, "--password", "a panel password")
	owner, err := srv.Store.User(created.ID, created.ID)
	if err != nil || !out.PasswordSet || bcrypt.CompareHashAndPassword(owner.GetPasswordHash(), []byte("a panel password")) != nil {
		t.Fatalf("after account password: %+v, %v", out, err)
	}
	if _, err := runAdminTest(t, adminEnv(srv), "account", "password", created.ID); ExitCode(err) != 2 {
		t.Fatalf("without --password: %v (exit %d), want a usage error", err, ExitCode(err))
	}
	if _, err := runAdminTest(t, adminEnv(srv), "account", "password", created.ID, "--password", "short"); err == nil || !strings.Contains(err.Error(), "invalid field: password") {
		t.Fatalf("short password: %v", err)
	}
	mustRunAdmin(t, srv, &out, "account", "password", created.ID, "--password", "")
	if owner, _ := srv.Store.User(created.ID, created.ID); out.PasswordSet || len(owner.GetPasswordHash()) != 0 {
		t.Fatalf("password not removed: %+v", out)
	}
}

// An account made without a password says, on stderr, that nobody can sign
// in to it and how to set one; account list lists it.
func TestAdminAccountWithoutPasswordAndList(t *testing.T) {
	srv := controltest.NewServer(t)
	var stdout, stderr bytes.Buffer
	if err := runAdminEnv(context.Background(), []string{"account", "create", "--email", "ops@example.com"}, adminEnv(srv), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var created client.CreatedAccount
	if err := json.Unmarshal(stdout.Bytes(), &created); err != nil {
		t.Fatalf("stdout is not the JSON answer: %v\n%s", err, stdout.String())
	}
	want := "The account has no password: nobody can sign in to the panel as ops@example.com until one is set:\n" +
		"  lookout admin account password " + created.ID + " --password NEW\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	stdout.Reset()
	stderr.Reset()
	if err := runAdminEnv(context.Background(), []string{"account", "create", "--email", "dev@example.com", "--password", "s3cret-pass"}, adminEnv(srv), &stdout, &stderr); err != nil || stderr.Len() != 0 {
		t.Fatalf("with a password: %v, stderr %q", err, stderr.String())
	}

	var listed struct{ Accounts []client.AccountSummary }
	mustRunAdmin(t, srv, &listed, "account", "list")
	emails := map[string]bool{}
	for _, a := range listed.Accounts {
		emails[a.Email] = a.Plan.Name == "default" && !a.CreatedAt.IsZero()
	}
	if len(listed.Accounts) != 2 || !emails["ops@example.com"] || !emails["dev@example.com"] {
		t.Errorf("listed %+v", listed.Accounts)
	}
	reads := srv.Cluster.Reads()
	mustRunAdmin(t, srv, &listed, "account", "list", "--stale")
	if srv.Cluster.Reads() != reads || len(listed.Accounts) != 2 {
		t.Errorf("--stale: %d consistent reads, %d accounts", srv.Cluster.Reads()-reads, len(listed.Accounts))
	}
}
