package state

import (
	"fmt"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// BenchmarkAgentAssignments reads a region's assignments from a state of
// 10,000 ping monitors, 1,000 checks (half of them of the region) and
// 1,000 accounts with their ingest keys: what the streams of one token pay
// per change.
func BenchmarkAgentAssignments(b *testing.B) {
	s, err := Open(Options{Dir: b.TempDir(), Small: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var cmds []*raftv1.Command
	for i := range 1000 {
		cmds = append(cmds, newAccount(fmt.Sprint("acct-", i)))
	}
	for i := range 100 {
		pings := minimalPings(100)
		for j, p := range pings {
			p.Uuid, p.Name = fmt.Sprintf("00000000-0000-4000-8000-%012d", i*100+j), fmt.Sprintf("m%d", i*100+j)
		}
		cmds = append(cmds, putMonitorsCmd("acct-0", pings, nil))
	}
	for i := range 10 {
		var checks []*raftv1.MonitorSpec
		for j := range 100 {
			n := i*100 + j
			region := "eu"
			if n%2 == 1 {
				region = "us"
			}
			checks = append(checks, &raftv1.MonitorSpec{Uuid: fmt.Sprintf("10000000-0000-4000-8000-%012d", n), Kind: KindHTTPCheck, Name: fmt.Sprint("c", n),
				Enabled: true, Schedule: "1m", Regions: []string{region}, Config: &raftv1.CheckConfig{Url: "https://example.com/", Method: "GET", Timeout: 10}})
		}
		cmds = append(cmds, putMonitorsCmd("acct-1", checks, nil))
	}
	res := s.ApplyBatch(entries(1, cmds...))
	for i, r := range res {
		if r.GetStatus() != raftv1.Status_STATUS_OK {
			b.Fatalf("command %d: %v", i, r)
		}
	}
	// A token of every account, and a token of the account with the
	// checks: the reading costs the same scan; only what it keeps differs.
	b.Run("every account", func(b *testing.B) {
		for b.Loop() {
			a, err := s.AgentAssignments("eu", nil)
			if err != nil || len(a.Checks) != 500 || len(a.Keys) != 1000 {
				b.Fatalf("%d checks %d keys %v", len(a.Checks), len(a.Keys), err)
			}
		}
	})
	b.Run("one account", func(b *testing.B) {
		for b.Loop() {
			a, err := s.AgentAssignments("eu", []string{"acct-1"})
			if err != nil || len(a.Checks) != 500 || len(a.Keys) != 1 {
				b.Fatalf("%d checks %d keys %v", len(a.Checks), len(a.Keys), err)
			}
		}
	})
}
