package buffer

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMetrics: the registered metrics follow the buffer.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	b, err := Open(Options{Dir: t.TempDir(), MaxBytes: 2 << 10, Small: true, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 20 {
		if err := b.AppendResult(result(string(rune('a'+i)), 1)); err != nil {
			t.Fatal(err)
		}
	}
	for err := error(nil); err == nil; {
		err = b.AppendEvent(event("e", 100))
	}
	s := b.Stats()
	want := `
# HELP lookout_agent_buffer_dropped_results_total Check results dropped, oldest first, to make room in a full buffer.
# TYPE lookout_agent_buffer_dropped_results_total counter
lookout_agent_buffer_dropped_results_total 20
# HELP lookout_agent_buffer_refused_events_total Pings refused because buffered pings filled the buffer (answered 503 buffer_full).
# TYPE lookout_agent_buffer_refused_events_total counter
lookout_agent_buffer_refused_events_total 1
# HELP lookout_agent_buffer_results Check results held in the agent's buffer, not yet acknowledged by the control plane.
# TYPE lookout_agent_buffer_results gauge
lookout_agent_buffer_results 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"lookout_agent_buffer_dropped_results_total", "lookout_agent_buffer_refused_events_total", "lookout_agent_buffer_results"); err != nil {
		t.Fatal(err)
	}
	if got := gaugeValue(t, reg, "lookout_agent_buffer_events"); got != float64(s.Events) || got == 0 {
		t.Fatalf("events gauge %v, stats %d", got, s.Events)
	}
	if n, _ := testutil.GatherAndCount(reg); n != 7 {
		t.Fatalf("%d metrics, want 7", n)
	}
}

// gaugeValue reads one gauge through the registry.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
