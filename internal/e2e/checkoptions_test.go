package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"lookout/internal/probe/probetest"
)

// execDetail is an execution with the details this file reads.
type execDetail struct {
	Agent  string          `json:"agent"`
	Status string          `json:"status"`
	Error  string          `json:"error"`
	HTTP   json.RawMessage `json:"http"`
	SSL    json.RawMessage `json:"ssl"`
	TCP    json.RawMessage `json:"tcp"`
	DNS    json.RawMessage `json:"dns"`
}

// firstVerdict waits for a check's first final execution, reading once
// a second (the Management API allows a key 60 reads a minute).
func firstVerdict(ctx context.Context, t *testing.T, base, key, uuid string) execDetail {
	t.Helper()
	var last []execDetail
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/monitors/"+uuid+"/executions?limit=10", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("executions: %s", resp.Status)
			resp.Body.Close()
		} else if err == nil {
			var out struct {
				Executions []execDetail `json:"executions"`
			}
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			last = out.Executions
			for _, e := range out.Executions {
				if e.Status == "success" || e.Status == "failed" {
					return e
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no verdict for %s: %v (executions: %+v)", uuid, err, last)
		case <-time.After(time.Second):
		}
	}
}

// TestAgentRunsChecksForRealEndpoints: checks of private endpoints, sent
// through the Management API with a region, run by that region's agent
// process with every option carried over the agent protocol: an HTTPS
// API signed by a private CA that wants a token header and a client
// certificate and answers JSON (and a failing json_path assertion on
// it), its certificate as an ssl_check with the CA, a TCP echo, and a
// DNS server. Then the export shows no secret and applies back
// unchanged.
func TestAgentRunsChecksForRealEndpoints(t *testing.T) {
	t.Parallel()
	ca := probetest.NewRoot(t, "Corp Root", probetest.For(3650*probetest.Day))
	clients := probetest.NewRoot(t, "Corp Clients", probetest.For(3650*probetest.Day))
	client := clients.ClientLeaf(t, probetest.For(30*probetest.Day), "lookout")
	api := probetest.MutualTLSServer(t, probetest.Chain(ca.Leaf(t, probetest.For(200*probetest.Day), "127.0.0.1")), clients,
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Api-Key") != "k3y-secret" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, `{"status": "ok", "method": %q, "body": %q}`, r.Method, body)
		}))
	echo := probetest.NewTCPServer(t, probetest.Echo)
	dns := probetest.NewDNSServer(t, "db.corp.test. 60 IN A 10.1.2.3")

	s := startControl(t)
	s.startAgent(t, "edge-1", "dc-1")
	pem := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	httpConfig := func(status string) string {
		return fmt.Sprintf(`{"url":%q,"method":"POST","body":"ping","headers":{"X-Api-Key":"k3y-secret"},"ca":%s,
			"client_cert":%s,"client_key":%s,"expected_status":"2xx","max_response_ms":5000,
			"json_path":[{"path":"$.status","equals":%q},{"path":"$.method","equals":"POST"},{"path":"$.body","equals":"ping"}]}`,
			api.URL+"/health", pem(ca.PEM()), pem(client.PEM()), pem(client.KeyPEM(t)), status)
	}
	checks := []struct {
		name, manifest string
		status, detail string // detail: the execution's object that must be there
		err            string
	}{
		{"api", `{"manifest_version":1,"kind":"http_check","name":"api","schedule":"1h","regions":["dc-1"],"config":` + httpConfig("ok") + `}`, "success", "http", ""},
		{"api degraded", `{"manifest_version":1,"kind":"http_check","name":"api degraded","schedule":"1h","regions":["dc-1"],"config":` + httpConfig("degraded") + `}`,
			"failed", "http", `$.status was "ok", expected "degraded"`},
		{"api certificate", fmt.Sprintf(`{"manifest_version":1,"kind":"ssl_check","name":"api certificate","schedule":"1h","regions":["dc-1"],
			"config":{"domain":"127.0.0.1","port":%s,"ca":%s}}`, probetest.Port(api), pem(ca.PEM())), "success", "ssl", ""},
		{"echo", fmt.Sprintf(`{"manifest_version":1,"kind":"tcp_check","name":"echo","schedule":"1h","regions":["dc-1"],
			"config":{"host":"127.0.0.1","port":%d,"send":"PING\r\n","expect":"PING"}}`, echo.Port), "success", "tcp", ""},
		{"db record", fmt.Sprintf(`{"manifest_version":1,"kind":"dns_check","name":"db record","schedule":"1h","regions":["dc-1"],
			"config":{"name":"db.corp.test","type":"A","server":%q,"expected":["10.1.2.3"]}}`, dns.Addr), "success", "dns", ""},
	}
	ctx := ctxT(t, 2*time.Minute)
	for _, c := range checks {
		m, err := s.mgmt.CreateMonitorJSON(ctx, json.RawMessage(c.manifest))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		e := firstVerdict(ctx, t, s.controlURL, s.account.ManagementKey, m.UUID)
		var detail json.RawMessage
		switch c.detail {
		case "http":
			detail = e.HTTP
		case "ssl":
			detail = e.SSL
		case "tcp":
			detail = e.TCP
		case "dns":
			detail = e.DNS
		}
		if e.Agent != "edge-1" || e.Status != c.status || len(detail) == 0 || c.err != "" && e.Error != c.err {
			t.Errorf("%s: execution %+v, want %s by edge-1 with %s details and error %q", c.name, e, c.status, c.detail, c.err)
		}
		if c.detail == "dns" && !strings.Contains(string(e.DNS), `"10.1.2.3"`) {
			t.Errorf("%s: answers %s", c.name, e.DNS)
		}
	}

	export, err := s.mgmt.ExportJSON(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(export), "k3y-secret") || strings.Contains(string(export), "PRIVATE KEY") || !strings.Contains(string(export), `"********"`) {
		t.Fatalf("the export shows a secret, or no mask: %s", export)
	}
	report, err := s.mgmt.Apply(ctx, export, false)
	if err != nil {
		t.Fatal(err)
	}
	if report.Summary.Unchanged != len(checks) || report.Summary.Update != 0 || report.Summary.Create != 0 {
		t.Fatalf("the export applied back: %+v", report.Summary)
	}
}
