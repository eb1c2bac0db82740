package state

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestEntryThatDoesNotFitAloneIsRefused is the safety net under the
// command bounds: an entry within them that still does not fit a fresh
// transaction (here a store with tiny transactions) is refused as
// INVALID, writing only the applied index, and logged at error level,
// instead of panicking the node at every replay. The entries around it
// apply.
func TestEntryThatDoesNotFitAloneIsRefused(t *testing.T) {
	var logs bytes.Buffer
	s, err := Open(Options{Dir: t.TempDir(), Small: true, memTableSize: 256 << 10,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Error})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustOK(t, s, newAccount("a"))
	big := minimalPings(MaxPutMonitors)
	for _, m := range big {
		m.DisplayName = strings.Repeat("d", 600) // records kept inline: they count in full
	}
	if err := CheckCommand(putMonitorsCmd("a", big, nil)); err != nil {
		t.Fatal(err)
	}
	small := &raftv1.MonitorSpec{Uuid: "00000000-0000-4000-8000-999999999999", Kind: KindPing, Name: "after", Enabled: true, TimeoutSeconds: 60}
	before := dumpKV(t, s, false)
	res := s.ApplyBatch(entries(2, putMonitorsCmd("a", big, nil), putMonitorsCmd("a", []*raftv1.MonitorSpec{small}, nil)))
	if res[0].GetStatus() != raftv1.Status_STATUS_INVALID || res[0].GetCode() != CodeCommandTooLarge {
		t.Fatalf("too big: %v", res[0])
	}
	if res[1].GetStatus() != raftv1.Status_STATUS_OK || s.AppliedIndex() != 3 {
		t.Fatalf("after: %v, applied %d", res[1], s.AppliedIndex())
	}
	if ms, _ := s.Monitors("a"); len(ms) != 1 || ms[0].GetName() != "after" {
		t.Fatalf("monitors %v", ms)
	}
	// Nothing but the applied index and the second entry's writes.
	after := dumpKV(t, s, false)
	for k := range after {
		if _, ok := before[k]; !ok && !strings.Contains(k, "after") && !strings.HasPrefix(k, "mon:00000000-0000-4000-8000-999999999999") &&
			!strings.HasPrefix(k, "mon-count:") && !strings.HasPrefix(k, "req") && !strings.HasPrefix(k, "audit") {
			t.Errorf("key %q written", k)
		}
	}
	if !strings.Contains(logs.String(), "[ERROR]") || !strings.Contains(logs.String(), "index=2") {
		t.Errorf("not logged at error level: %q", logs.String())
	}
	// The same entry replayed (a restart) is skipped; applied alone again
	// (another node) it gets the same answer.
	other, err := Open(Options{Dir: t.TempDir(), Small: true, memTableSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	mustOK(t, other, newAccount("a"))
	if r := other.ApplyBatch(entries(2, putMonitorsCmd("a", big, nil)))[0]; fmt.Sprint(r) != fmt.Sprint(res[0]) {
		t.Fatalf("another node: %v", r)
	}
}
