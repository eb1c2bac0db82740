package state

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestMonitorListAgreesWithThePointReads: MonitorList gives, for each
// monitor, what Monitors, CheckStatus and InOfflineRegion give one by one.
func TestMonitorListAgreesWithThePointReads(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"))
	putCheck(t, s, KindHTTPCheck, true, true) // checkID "site" of account a
	mustOK(t, s, recordCmd(10, execution(t0, ExecFailed)))
	regional := &raftv1.MonitorSpec{Uuid: "22222222-0000-4000-8000-000000000000", Kind: KindSSLCheck, Name: "cert", Enabled: true, Schedule: "1h",
		Regions: []string{"eu"}, Config: &raftv1.CheckConfig{Domain: "example.com", WarningDays: 30, AlertDays: 7}}
	mustOK(t, s, cmd(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "a", Creates: []*raftv1.MonitorSpec{regional}}}}))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "run", t0, func(e *raftv1.Event) { e.Region = "eu" })))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "local", "complete", t0), ping("b", "theirs", "complete", t0)))
	// Another account's monitors lie between a's in the key order, many
	// at a time: read past by seeking, not stepping.
	var theirs []*raftv1.Event
	for i := range 60 {
		theirs = append(theirs, ping("b", fmt.Sprintf("b-%d", i), "complete", t0))
	}
	ingestOK(t, s, ingestAt(t0, 0, theirs...))
	mustOK(t, s, regionCmd(t0, "eu", true, t0, false))

	list, err := s.MonitorList("a")
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.Monitors("a")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(all) || len(all) != 4 {
		t.Fatalf("listed %d, Monitors %d, want 4", len(list), len(all))
	}
	for i, lm := range list {
		m := all[i]
		if !proto.Equal(lm.Monitor, m) {
			t.Fatalf("%d: %v, want %v", i, lm.Monitor, m)
		}
		off, _ := s.InOfflineRegion(m)
		if lm.Offline != off {
			t.Fatalf("%s: offline %v, want %v", m.GetName(), lm.Offline, off)
		}
		if m.GetKind() == KindPing {
			if lm.Check != nil {
				t.Fatalf("%s: a ping monitor with a check status", m.GetName())
			}
			continue
		}
		cs, _ := s.CheckStatus(m.GetUuid())
		if !proto.Equal(lm.Check, cs) {
			t.Fatalf("%s: status %v, want %v", m.GetName(), lm.Check, cs)
		}
	}
	offline := map[string]bool{}
	for _, lm := range list {
		offline[lm.Monitor.GetName()] = lm.Offline
	}
	if !offline["job"] || !offline["cert"] || offline["local"] || offline["site"] {
		t.Fatalf("offline: %v", offline)
	}
}

// TestMonitorsAfterPages reads an account's monitors in pages from the
// name index: every one once, in (kind, name) order, a kind alone too.
func TestMonitorsAfterPages(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"))
	var evs []*raftv1.Event
	for i := range 7 {
		evs = append(evs, ping("a", fmt.Sprintf("job-%d", i), "complete", t0))
	}
	ingestOK(t, s, ingestAt(t0, 0, append(evs, ping("b", "job-x", "complete", t0))...))
	putCheck(t, s, KindHTTPCheck, true, true)
	all, _ := s.Monitors("a")
	for _, kind := range []string{"", KindPing} {
		var got []string
		afterKind, afterName := "", ""
		for range 10 {
			page, err := s.MonitorsAfter("a", kind, afterKind, afterName, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, m := range page {
				got = append(got, m.GetKind()+" "+m.GetName())
			}
			last := page[len(page)-1]
			afterKind, afterName = last.GetKind(), last.GetName()
		}
		var want []string
		for _, m := range all {
			if kind == "" || m.GetKind() == kind {
				want = append(want, m.GetKind()+" "+m.GetName())
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("kind %q: pages %v, want %v", kind, got, want)
		}
	}
}
