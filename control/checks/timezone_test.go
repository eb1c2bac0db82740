package checks

import (
	"fmt"
	"testing"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestCronChecksRunInTheirZone: a check's cron times are wall-clock times
// in its timezone: 18:00 in Kolkata (+05:30) is 12:30 UTC.
func TestCronChecksRunInTheirZone(t *testing.T) {
	f := newFixture(t)
	const id = "c0000000-0000-4000-8000-0000000000a1"
	f.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "a", Creates: []*raftv1.MonitorSpec{{
		Uuid: id, Kind: state.KindHTTPCheck, Name: id, Enabled: true, Schedule: "0 18 * * *", Timezone: "Asia/Kolkata",
		Config: &raftv1.CheckConfig{Url: url(id), Method: "GET", Timeout: 10, ExpectedStatus: new(int64(200))},
	}}}}})
	f.clock.Advance(45 * time.Second) // past the run a new check gets at once
	f.start(Options{})
	f.settle(15*time.Second, base.Add(59*time.Minute)) // steps within MaxLate
	var slots []string
	for _, v := range f.verdicts(id) {
		slots = append(slots, time.UnixMilli(v.GetSlotUnixMs()).UTC().Format("15:04:05"))
	}
	if fmt.Sprint(slots) != "[12:30:00]" {
		t.Fatalf("slots %v, want [12:30:00]", slots)
	}
}
