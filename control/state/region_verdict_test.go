package state

import (
	"slices"
	"strings"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// putRegionCheck creates the check with regions and confirm_regions
// (0: unset).
func putRegionCheck(t *testing.T, s *Store, confirm int64, regions ...string) {
	t.Helper()
	spec := &raftv1.MonitorSpec{Uuid: checkID, Kind: KindHTTPCheck, Name: "site", Enabled: true, Schedule: "1m", Regions: regions,
		Config: &raftv1.CheckConfig{Url: "https://example.com", Method: "GET", Timeout: 10}}
	if confirm > 0 {
		spec.ConfirmRegions = &confirm
	}
	mustOK(t, s, cmd(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "a", Creates: []*raftv1.MonitorSpec{spec}}}}))
}

func regionExec(slot int64, region, status string) *raftv1.Execution {
	e := execution(slot, status)
	e.Region, e.Agent = region, "agent-"+region
	return e
}

// alertsWithRegions lists the pending alerts as "type[regions]".
func alertsWithRegions(t *testing.T, s *Store) []string {
	t.Helper()
	pending, err := s.PendingAlerts(0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range pending {
		out = append(out, a.GetType()+"["+strings.Join(a.GetRegions(), ",")+"]")
	}
	slices.Sort(out)
	return out
}

// TestConfirmRegions: with confirm_regions 2 of eu and us, one region's
// failure alerts nothing; both failing in one slot raise exactly one
// check.failed naming both; a repeat or a third report of the slot adds
// nothing; the next success recovers.
func TestConfirmRegions(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putRegionCheck(t, s, 2, "eu", "us", "ap")
	slot := t0 + 60_000
	mustOK(t, s, recordCmd(0, regionExec(slot, "eu", ExecSuccess), regionExec(slot, "us", ExecSuccess)))
	slot += 60_000
	mustOK(t, s, recordCmd(0, regionExec(slot, "eu", ExecFailed)))
	if got := alertsWithRegions(t, s); len(got) != 0 {
		t.Fatalf("one region of two needed failed: alerts %v", got)
	}
	if cs := checkStatus(t, s); cs.GetVerdict() != ExecSuccess {
		t.Fatalf("verdict %q after an unconfirmed failure", cs.GetVerdict())
	}
	mustOK(t, s, recordCmd(0, regionExec(slot, "ap", ExecSuccess))) // ap saw it up
	mustOK(t, s, recordCmd(0, regionExec(slot, "us", ExecFailed)))
	want := []string{AlertCheckFailed + "[eu,us]"}
	if got := alertsWithRegions(t, s); !slices.Equal(got, want) {
		t.Fatalf("alerts %v, want %v", got, want)
	}
	if cs := checkStatus(t, s); cs.GetVerdict() != ExecFailed || cs.GetVerdictSlotUnixMs() != slot {
		t.Fatalf("status %v, want failed at %d", cs, slot)
	}
	// Repeats, and a late success of the same slot, change nothing.
	mustOK(t, s, recordCmd(0, regionExec(slot, "us", ExecFailed), regionExec(slot, "eu", ExecFailed)))
	if got := alertsWithRegions(t, s); !slices.Equal(got, want) {
		t.Fatalf("after repeats: alerts %v, want %v", got, want)
	}
	// Still failing in the next slot: no new alert.
	slot += 60_000
	mustOK(t, s, recordCmd(0, regionExec(slot, "eu", ExecFailed), regionExec(slot, "us", ExecFailed)))
	if got := alertsWithRegions(t, s); !slices.Equal(got, want) {
		t.Fatalf("still down: alerts %v, want %v", got, want)
	}
	// The next success recovers.
	slot += 60_000
	mustOK(t, s, recordCmd(0, regionExec(slot, "eu", ExecSuccess)))
	want = []string{AlertCheckFailed + "[eu,us]", AlertCheckRecovered + "[]"}
	if got := alertsWithRegions(t, s); !slices.Equal(got, want) {
		t.Fatalf("after recovery: alerts %v, want %v", got, want)
	}
}

// TestConfirmRegionsDefault: without confirm_regions one region's failure
// is enough; the alert names it; a success of another region in the same
// slot does not undo it, one of a later slot recovers.
func TestConfirmRegionsDefault(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putRegionCheck(t, s, 0, "eu", "us")
	slot := t0 + 60_000
	mustOK(t, s, recordCmd(0, regionExec(slot, "us", ExecFailed)))
	mustOK(t, s, recordCmd(0, regionExec(slot, "eu", ExecSuccess)))
	mustOK(t, s, recordCmd(0, regionExec(slot, "eu", ExecFailed))) // a repeat: the verdict of eu stands
	want := []string{AlertCheckFailed + "[us]"}
	if got := alertsWithRegions(t, s); !slices.Equal(got, want) {
		t.Fatalf("alerts %v, want %v", got, want)
	}
	if cs := checkStatus(t, s); cs.GetVerdict() != ExecFailed {
		t.Fatalf("verdict %q, want failed", cs.GetVerdict())
	}
	mustOK(t, s, recordCmd(0, regionExec(slot+60_000, "eu", ExecSuccess)))
	want = append(want, AlertCheckRecovered+"[]")
	if got := alertsWithRegions(t, s); !slices.Equal(got, want) {
		t.Fatalf("alerts %v, want %v", got, want)
	}
}
