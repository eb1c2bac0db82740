package panel

import (
	"strings"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

func labels(c chart) string {
	var out []string
	for _, t := range c.Ticks {
		out = append(out, t.Label)
	}
	return strings.Join(out, ", ")
}

// TestChartAxisUnitsByRange: the y axis counts in ms, s, min or h by the
// range, at round values from 0; the longest run is labelled in its unit.
func TestChartAxisUnitsByRange(t *testing.T) {
	const at = int64(1_773_577_800_000)
	runs := func(seconds ...float64) chart {
		var events []*statev1.StoredEvent
		for i, s := range seconds {
			d := s
			events = append(events, &statev1.StoredEvent{Seq: uint64(i), EventTimeUnixMs: at - int64(i)*60_000, Duration: &d, Color: "green",
				Event: &raftv1.Event{EventType: "ping", Status: "complete"}})
		}
		return eventChart(events)
	}
	for _, tc := range []struct {
		name    string
		c       chart
		unit    string
		max     string
		ticks   string
		minBarH float64
	}{
		{"millisecond runs", runs(0.004, 0.012, 0.007), "ms", "12 ms", "0 ms, 5 ms, 10 ms, 15 ms", 3},
		{"instant runs", runs(0, 0), "ms", "0 ms", "0 ms, 0.5 ms, 1 ms", 1.5},
		{"seconds", runs(42, 61.5, 12), "s", "62 s", "0 s, 20 s, 40 s, 60 s, 80 s", 20},
		{"minutes", runs(150, 600), "min", "10 min", "0 min, 5 min, 10 min", 30},
		{"hours", runs(3*3600, 7200), "h", "3 h", "0 h, 1 h, 2 h, 3 h", 90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.c.Unit != tc.unit || tc.c.Max != tc.max || labels(tc.c) != tc.ticks {
				t.Fatalf("unit %q, max %q, ticks %q; want %q, %q, %q", tc.c.Unit, tc.c.Max, labels(tc.c), tc.unit, tc.max, tc.ticks)
			}
			for _, b := range tc.c.Bars {
				if b.H < 1.5 || b.H > chartHeight || b.Y+b.H != chartHeight {
					t.Fatalf("bar %+v outside the plot", b)
				}
			}
			// Time on x: the newest run's at the right end.
			if len(tc.c.Times) < 2 || tc.c.Times[1].Text != "12:30" || tc.c.Times[1].X != 100 {
				t.Fatalf("time labels %+v", tc.c.Times)
			}
		})
	}
}

// TestCheckChartLeavesOutRunsWithoutAResponse: a refused connection (a
// failed execution without a response, 0 ms) is a short mark, not a bar
// that sets the scale; an http_check's time is the response's total.
func TestCheckChartLeavesOutRunsWithoutAResponse(t *testing.T) {
	const at = int64(1_773_577_800_000)
	var execs []*raftv1.Execution
	for i := range 4 {
		e := &raftv1.Execution{SlotUnixMs: at - int64(i)*60_000, FinishedUnixMs: at - int64(i)*60_000 + 30, Region: "control", Status: "success", DurationMs: 30,
			Http: &raftv1.ExecutionHTTP{StatusCode: 200, TotalMs: int64(20 + 10*i)}}
		if i == 1 {
			e.Status, e.DurationMs, e.Http, e.Error = "failed", 0, nil, "connection refused"
		}
		execs = append(execs, e)
	}
	c := execChart(execs)
	if c.Unit != "ms" || c.Max != "50 ms" || c.Failures != 1 || c.What != "Response times" {
		t.Fatalf("chart %+v", c)
	}
	refused := c.Bars[1]
	if refused.H != failMark || refused.Color != "red" || !strings.Contains(refused.Title, "no response") {
		t.Fatalf("the refused run: %+v", refused)
	}
	if got := c.Bars[3].Title; !strings.Contains(got, "50 ms") {
		t.Fatalf("the oldest bar says %q", got)
	}
	// Only refusals: marks on an axis, and no longest.
	only := execChart(execs[1:2])
	if only.Max != "" || only.Failures != 1 || labels(only) != "0 ms, 0.5 ms, 1 ms" {
		t.Fatalf("only refusals: %+v", only)
	}
}
