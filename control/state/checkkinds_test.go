package state

import (
	"strings"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// The four check kinds share one name space: a tcp_check or dns_check
// cannot take the name of another check, of any kind.
func TestCheckKindsShareANameSpace(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	put := func(id, kind, name string) *raftv1.Result {
		spec := &raftv1.MonitorSpec{Uuid: id, Kind: kind, Name: name, Enabled: true, Schedule: "1m",
			Config: &raftv1.CheckConfig{Host: "db", Port: 5432, DnsName: "example.com", DnsType: "A", Url: "https://example.com"}}
		return apply(t, s, cmd(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "a", Creates: []*raftv1.MonitorSpec{spec}}}}))[0]
	}
	if r := put("10000000-0000-4000-8000-000000000001", KindTCPCheck, "db"); r.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("tcp_check: %v", r)
	}
	for i, kind := range []string{KindHTTPCheck, KindSSLCheck, KindDNSCheck} {
		r := put("10000000-0000-4000-8000-00000000001"+string(rune('0'+i)), kind, "db")
		if r.GetCode() != CodeNameTakenByOtherKind {
			t.Errorf("%s named like the tcp_check: %v", kind, r)
		}
	}
	if r := put("10000000-0000-4000-8000-000000000002", KindTCPCheck, "db"); r.GetCode() != CodeNameAlreadyExists {
		t.Errorf("a second tcp_check: %v", r)
	}
	if r := put("10000000-0000-4000-8000-000000000003", KindPing, "db"); r.GetStatus() != raftv1.Status_STATUS_OK {
		t.Errorf("a ping monitor has its own name space: %v", r)
	}
}

// A dns_check's execution: its answers are bounded like every other
// detail, and it raises check.failed like an http_check.
func TestDNSExecutionBoundedAndAlerted(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindDNSCheck, true, true)
	e := execution(t0, ExecFailed)
	e.Dns = &raftv1.ExecutionDNS{Answers: make([]string, MaxExecutionAnswers+1)}
	if r := apply(t, s, recordCmd(0, e))[0]; r.GetStatus() != raftv1.Status_STATUS_INVALID {
		t.Fatalf("%d answers: %v", len(e.Dns.Answers), r)
	}
	e.Dns.Answers = []string{strings.Repeat("t", MaxExecutionAnswer+1)}
	if r := apply(t, s, recordCmd(0, e))[0]; r.GetStatus() != raftv1.Status_STATUS_INVALID {
		t.Fatalf("a long answer: %v", r)
	}
	BoundExecution(e)
	mustOK(t, s, recordCmd(0, e))
	if got := alertTypes(t, s); len(got) != 1 || got[0] != AlertCheckFailed {
		t.Fatalf("alerts %v", got)
	}
}
