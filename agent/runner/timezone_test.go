package runner_test

import (
	"testing"
	"time"

	"lookout/agent/runner"
)

// TestCronChecksRunInTheirZone: the agent reads a check's cron times in
// the check's timezone: 18:00 in Kolkata (+05:30) is 12:30 UTC.
func TestCronChecksRunInTheirZone(t *testing.T) {
	tg := newTarget(t, 200)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := newClock(t0)
	c := httpCheck("c1", tg.srv.URL, "0 18 * * *", 1)
	c.Timezone = "Asia/Kolkata"
	h := start(t, runner.Options{Now: clk.Now, After: clk.After, MaxLate: 30 * time.Second}, c)
	settle()
	clk.Advance(30 * time.Minute)
	if ex := h.waitResults(t, 1)[0]; ex.GetSlotUnixMs() != t0.Add(30*time.Minute).UnixMilli() {
		t.Fatalf("slot %v, want 12:30 UTC", time.UnixMilli(ex.GetSlotUnixMs()).UTC())
	}
}
