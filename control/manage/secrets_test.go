package manage_test

import (
	"context"
	"strings"
	"testing"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/manifest"
)

// privateCheck is an http_check with every kind of secret.
func privateCheck(name string) map[string]any {
	return map[string]any{"manifest_version": 1, "kind": "http_check", "name": name, "schedule": "1m", "regions": []string{"dc-1"},
		"config": map[string]any{"url": "https://api.corp.test/health", "method": "POST", "body": `{"deep": true}`,
			"headers":    map[string]any{"X-Api-Key": "k3y-secret", "Accept": "application/json"},
			"basic_auth": map[string]any{"username": "watch", "password": "pa55-secret"},
			"json_path":  []any{map[string]any{"path": "$.status", "equals": "ok"}}, "max_response_ms": 1000,
			"tls_skip_verify": true, "expected_status": "2xx"}}
}

// storedConfig reads the check's config from the state (what the probes
// get).
func (a *api) storedConfig(id string) *raftv1.CheckConfig {
	a.t.Helper()
	m, err := a.srv.Store.Monitor(a.acct.ID, id)
	if err != nil {
		a.t.Fatal(err)
	}
	return m.GetConfig()
}

func noSecret(t *testing.T, what string, v any) {
	t.Helper()
	if js := toJSON(v); strings.Contains(js, "k3y-secret") || strings.Contains(js, "pa55-secret") || strings.Contains(js, "n3w-secret") {
		t.Fatalf("%s shows a secret: %s", what, js)
	}
}

// Secrets are stored as given and never shown back: not by create, GET,
// list, export, PUT or apply. A masked secret sent back keeps the stored
// one, so export then apply changes nothing.
func TestSecretsMaskedAndKept(t *testing.T) {
	a := newAPI(t)
	status, created, _ := a.do("POST", "/api/v1/monitors", privateCheck("api"))
	if status != 201 {
		t.Fatalf("create: %d %v", status, created)
	}
	noSecret(t, "create", created)
	id := created["uuid"].(string)
	cfg := a.storedConfig(id)
	if cfg.GetBasicAuth().GetPassword() != "pa55-secret" || cfg.GetHeaders()[1].GetValue() != "k3y-secret" {
		t.Fatalf("stored %v", cfg)
	}
	_, got, _ := a.do("GET", "/api/v1/monitors/"+id, nil)
	c := got["config"].(map[string]any)
	if c["headers"].(map[string]any)["X-Api-Key"] != manifest.Mask || c["basic_auth"].(map[string]any)["password"] != manifest.Mask ||
		c["headers"].(map[string]any)["Accept"] != "application/json" || c["expected_status"] != "2xx" {
		t.Fatalf("GET config %v", c)
	}
	_, list, _ := a.do("GET", "/api/v1/monitors", nil)
	noSecret(t, "list", list)
	_, export, _ := a.do("GET", "/api/v1/monitors/export", nil)
	noSecret(t, "export", export)

	// Export then apply: unchanged, the secrets kept.
	status, body, _ := a.do("POST", "/api/v1/monitors/apply", export)
	if s := summary(body); status != 200 || s["unchanged"] != 1 {
		t.Fatalf("export applied back: %d %v", status, body)
	}
	// PUT of what GET showed: the secrets kept.
	delete(got, "status")
	if status, body, _ := a.do("PUT", "/api/v1/monitors/"+id, got); status != 200 {
		t.Fatalf("PUT back: %d %v", status, body)
	} else {
		noSecret(t, "PUT", body)
	}
	if cfg := a.storedConfig(id); cfg.GetBasicAuth().GetPassword() != "pa55-secret" || cfg.GetHeaders()[1].GetValue() != "k3y-secret" {
		t.Fatalf("after PUT and apply the stored secrets are %v", cfg)
	}

	// A new secret is an update; the diff shows it masked.
	changed := privateCheck("api")
	changed["config"].(map[string]any)["basic_auth"] = map[string]any{"username": "watch", "password": "n3w-secret"}
	status, body, _ = a.do("POST", "/api/v1/monitors/apply", bundle(changed))
	if s := summary(body); status != 200 || s["update"] != 1 {
		t.Fatalf("changed secret: %d %v", status, body)
	}
	noSecret(t, "apply report", body)
	diff := body["changes"].([]any)[0].(map[string]any)["diff"].(map[string]any)
	if toJSON(diff["config.basic_auth"]) != `[{"password":"********","username":"watch"},{"password":"********","username":"watch"}]` {
		t.Fatalf("diff %v", diff)
	}
	if a.storedConfig(id).GetBasicAuth().GetPassword() != "n3w-secret" {
		t.Fatal("the new secret was not stored")
	}

	// A mask where nothing is stored: refused, nothing written.
	masked := privateCheck("other")
	masked["config"].(map[string]any)["headers"] = map[string]any{"Authorization": manifest.Mask}
	delete(masked["config"].(map[string]any), "basic_auth")
	status, body, _ = a.do("POST", "/api/v1/monitors", masked)
	if status != 422 || toJSON(codes(body, "manifest")) != `["secret_masked"]` {
		t.Fatalf("create with a mask: %d %v", status, body)
	}
	status, body, _ = a.do("POST", "/api/v1/monitors/apply", bundle(masked))
	if status != 422 || toJSON(codes(body, "monitors.0")) != `["secret_masked"]` {
		t.Fatalf("apply with a mask: %d %v", status, body)
	}
}

// Bad input of the new options and kinds: 422 with its code.
func TestOptionsBadInput(t *testing.T) {
	a := newAPI(t)
	withConfig := func(m map[string]any, key string, v any) map[string]any {
		m["config"].(map[string]any)[key] = v
		return m
	}
	tcp := func() map[string]any {
		return map[string]any{"manifest_version": 1, "kind": "tcp_check", "name": "db", "schedule": "1m", "config": map[string]any{"host": "db.internal", "port": 5432}}
	}
	dns := func() map[string]any {
		return map[string]any{"manifest_version": 1, "kind": "dns_check", "name": "www", "schedule": "1m", "config": map[string]any{"name": "www.example.com", "type": "A"}}
	}
	ssl := func() map[string]any {
		return map[string]any{"manifest_version": 1, "kind": "ssl_check", "name": "cert", "schedule": "1d", "config": map[string]any{"domain": "example.com"}}
	}
	for _, tc := range []struct {
		name string
		in   map[string]any
		code string
	}{
		{"header with a newline", withConfig(httpCheck("h", "https://a.test/"), "headers", map[string]any{"X-A": "1\r\nX-B: 2"}), manifest.CodeHeaderInvalid},
		{"body over 64 KiB", withConfig(httpCheck("h", "https://a.test/"), "body", strings.Repeat("b", 64<<10+1)), manifest.CodeBodyTooLarge},
		{"ca not PEM", withConfig(ssl(), "ca", "not a certificate"), manifest.CodeCAInvalid},
		{"port 0", withConfig(tcp(), "port", 0), manifest.CodePortInvalid},
		{"port 70000", withConfig(tcp(), "port", 70000), manifest.CodePortInvalid},
		{"ssl port 70000", withConfig(ssl(), "port", 70000), manifest.CodePortInvalid},
		{"dns type", withConfig(dns(), "type", "SRV"), manifest.CodeDNSTypeInvalid},
		{"tcp host", withConfig(tcp(), "host", "db internal"), manifest.CodeHostInvalid},
		{"json path", withConfig(httpCheck("h", "https://a.test/"), "json_path", []any{map[string]any{"path": "$..x", "equals": 1}}), manifest.CodeJSONPathInvalid},
	} {
		status, body, _ := a.do("POST", "/api/v1/monitors", tc.in)
		if status != 422 || toJSON(codes(body, "manifest")) != `["`+tc.code+`"]` {
			t.Errorf("%s: %d %v", tc.name, status, body["error_codes"])
		}
	}
}

// tcp_check and dns_check: created, listed by kind, in the checks' name
// space, with their executions' tcp and dns details.
func TestNewKinds(t *testing.T) {
	a := newAPI(t)
	tcp := map[string]any{"manifest_version": 1, "kind": "tcp_check", "name": "db", "schedule": "1m", "config": map[string]any{"host": "DB.internal", "port": 5432, "send": "PING\r\n", "expect": "PONG"}}
	status, m, _ := a.do("POST", "/api/v1/monitors", tcp)
	if status != 201 || m["config"].(map[string]any)["host"] != "db.internal" || m["config"].(map[string]any)["timeout"] != 10.0 {
		t.Fatalf("tcp_check: %d %v", status, m)
	}
	dns := map[string]any{"manifest_version": 1, "kind": "dns_check", "name": "db", "schedule": "1m", "config": map[string]any{"name": "db.example.com"}}
	if status, body, _ := a.do("POST", "/api/v1/monitors", dns); status != 422 || toJSON(codes(body, "manifest")) != `["name_taken_by_other_kind"]` {
		t.Fatalf("a dns_check named like the tcp_check: %d %v", status, body)
	}
	dns["name"] = "db record"
	status, d, _ := a.do("POST", "/api/v1/monitors", dns)
	if status != 201 || d["config"].(map[string]any)["type"] != "A" {
		t.Fatalf("dns_check: %d %v", status, d)
	}
	if _, list, _ := a.do("GET", "/api/v1/monitors?kind=dns_check", nil); len(list["monitors"].([]any)) != 1 {
		t.Fatalf("list by kind: %v", list)
	}
	slot := a.srv.Now.UnixMilli()
	for _, e := range []*raftv1.Execution{
		{CheckUuid: m["uuid"].(string), Status: state.ExecSuccess, Tcp: &raftv1.ExecutionTCP{ConnectMs: 3}},
		{CheckUuid: d["uuid"].(string), Status: state.ExecFailed, Error: "192.0.2.9 is not among the A records of db.example.com (192.0.2.1)",
			Dns: &raftv1.ExecutionDNS{Answers: []string{"192.0.2.1"}, RttMs: 2}},
	} {
		e.AccountId, e.Region, e.SlotUnixMs, e.StartedUnixMs, e.FinishedUnixMs, e.Attempts = a.acct.ID, state.RegionControl, slot, slot, slot+5, 1
		res, err := a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{e}}}})
		if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("record: %v %v", res, err)
		}
	}
	_, body, _ := a.do("GET", "/api/v1/monitors/"+m["uuid"].(string)+"/executions", nil)
	if e := body["executions"].([]any)[0].(map[string]any); toJSON(e["tcp"]) != `{"connect_ms":3}` || e["http"] != nil {
		t.Fatalf("tcp execution %v", e)
	}
	_, body, _ = a.do("GET", "/api/v1/monitors/"+d["uuid"].(string)+"/executions", nil)
	if e := body["executions"].([]any)[0].(map[string]any); toJSON(e["dns"]) != `{"answers":["192.0.2.1"],"rtt_ms":2}` || e["error"] == nil {
		t.Fatalf("dns execution %v", e)
	}
	if _, got, _ := a.do("GET", "/api/v1/monitors/"+d["uuid"].(string), nil); got["status"].(map[string]any)["state"] != "down" {
		t.Fatalf("dns_check status %v", got["status"])
	}
}
