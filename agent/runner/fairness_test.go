package runner_test

import (
	"fmt"
	"testing"

	"lookout/agent/runner"
	"lookout/internal/probe/probetest"
)

// TestHungAccountDoesNotDelayAnother: an agent serving several accounts
// shares its workers fairly. acc1's 12 checks target a listener that
// accepts and never answers (60 s timeouts): they hold at most acc1's
// share of the 10 workers (8 by default), and acc2's check runs to its
// verdict while every one of them still hangs.
func TestHungAccountDoesNotDelayAnother(t *testing.T) {
	silent := probetest.NewSilent(t)
	good := newTarget(t, 200)
	h := start(t, runner.Options{Workers: 10})
	for i := range 12 {
		c := httpCheck(fmt.Sprint("hung-", i), silent.URL, "1h", 1)
		c.Config.Timeout = 60
		h.put(t, c)
	}
	h.waitStats(t, "acc1's checks to start", func(runner.Stats) bool { held, _ := silent.Held(); return held >= 8 })
	c := httpCheck("ok", good.srv.URL, "1h", 1)
	c.AccountId = "acc2"
	h.put(t, c)
	ex := h.waitResults(t, 1)[0]
	if ex.GetCheckUuid() != "ok" || ex.GetStatus() != "success" {
		t.Fatalf("verdict %v", ex)
	}
	if held, accepted := silent.Held(); held != 8 || accepted != 8 {
		t.Errorf("acc1's checks hold %d connections (%d made), want its share: 8", held, accepted)
	}
	if st := h.r.Stats(); st.WaitingForShare != 4 {
		t.Errorf("%d executions wait for their account's share, want 4", st.WaitingForShare)
	}
}
