package agent_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"

	"lookout/agent/agenttest"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/probe/probetest"
)

// TestAgentRunsEveryCheckKind: checks of every kind with their options,
// received over the agent protocol, run on the agent against real
// servers on loopback (an HTTPS API signed by a private CA that wants a
// token header and a client certificate, its certificate, a TCP echo, a
// DNS server), and their verdicts, with what was asserted when one fails,
// reach the control plane.
func TestAgentRunsEveryCheckKind(t *testing.T) {
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
	port := func(s string) int64 { var n int64; fmt.Sscan(s, &n); return n }

	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	startAgent(t, t.TempDir(), cp.URL())
	httpConfig := func(status string) *raftv1.CheckConfig {
		return &raftv1.CheckConfig{Url: api.URL + "/health", Method: "POST", Body: "ping", Timeout: 5,
			Headers: []*raftv1.HTTPHeader{{Name: "X-Api-Key", Value: "k3y-secret"}}, Ca: ca.PEM(),
			ClientCert: client.PEM(), ClientKey: client.KeyPEM(t), ExpectedStatuses: []string{"2xx"}, MaxResponseMs: 5000,
			JsonPath: []*raftv1.JSONPathAssertion{{Path: "$.status", EqualsJson: `"` + status + `"`}, {Path: "$.body", EqualsJson: `"ping"`}}}
	}
	checks := []*agentv1.Check{
		{Id: "api", Kind: "http_check", Config: httpConfig("ok")},
		{Id: "degraded", Kind: "http_check", Config: httpConfig("degraded")},
		{Id: "cert", Kind: "ssl_check", Config: &raftv1.CheckConfig{Domain: "127.0.0.1", Port: port(probetest.Port(api)), Ca: ca.PEM(), Timeout: 5}},
		{Id: "echo", Kind: "tcp_check", Config: &raftv1.CheckConfig{Host: "127.0.0.1", Port: int64(echo.Port), Send: "PING\r\n", Expect: "PING", Timeout: 5}},
		{Id: "record", Kind: "dns_check", Config: &raftv1.CheckConfig{DnsName: "db.corp.test", DnsType: "A", DnsServer: dns.Addr, DnsExpected: []string{"10.1.2.3"}, Timeout: 5}},
	}
	for _, c := range checks {
		c.AccountId, c.Name, c.Schedule = "acc1", c.Id, "1h"
		cp.PutCheck(c)
	}
	byID := map[string]*raftv1.Execution{}
	eventually(t, "every verdict", func() bool {
		for _, e := range cp.Executions() {
			byID[e.GetCheckUuid()] = e
		}
		return len(byID) == len(checks)
	})
	for id, e := range byID {
		want := "success"
		if id == "degraded" {
			want = "failed"
		}
		if e.GetStatus() != want {
			t.Errorf("%s: %v", id, e)
		}
	}
	if e := byID["degraded"]; e.GetError() != `$.status was "ok", expected "degraded"` || e.GetAttempts() != 1 {
		t.Errorf("degraded: %v", e)
	}
	if byID["api"].GetHttp().GetStatusCode() != 200 || !byID["cert"].GetSsl().GetChainValid() || byID["echo"].GetTcp() == nil ||
		!slices.Equal(byID["record"].GetDns().GetAnswers(), []string{"10.1.2.3"}) {
		t.Errorf("details: %v", byID)
	}
}

// TestFirstAssignmentsRunAtOnce: a check of a schedule of hours that the
// control plane assigns in the agent's very first message, together with
// the agent's token (which the check names as the one that may run it),
// runs at once like any new check, not at its next slot an hour later:
// the agent knows its token before its runner sees the check.
func TestFirstAssignmentsRunAtOnce(t *testing.T) {
	target := probetest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	for i := range 10 {
		cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
		cp.SetGossip([]byte("0123456789abcdef0123456789abcdef"), "tok-1")
		cp.PutCheck(&agentv1.Check{Id: "c1", AccountId: "acc1", Name: "site", Kind: "http_check", Schedule: "1h", Tokens: []string{"tok-1"},
			Config: &raftv1.CheckConfig{Url: target.URL, Timeout: 5}})
		p := startAgent(t, t.TempDir(), cp.URL())
		eventually(t, fmt.Sprintf("the first verdict (agent %d)", i), func() bool { return len(cp.Executions()) == 1 })
		p.stop()
		cp.Close()
	}
}
