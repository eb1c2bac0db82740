package bench

import (
	"fmt"
	"slices"
	"time"
)

// Latencies are durations summarised by their percentiles.
type Latencies []time.Duration

// Percentile is the p-th (0 to 1) of l, sorting it in place (0 for none).
func (l Latencies) Percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	if !slices.IsSorted(l) {
		slices.Sort(l)
	}
	return l[min(len(l)-1, int(p*float64(len(l))))]
}

// Summary is "p50 / p99 / max" to the millisecond.
func (l Latencies) Summary() string {
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("%s / %s / %s", ms(l.Percentile(0.5)), ms(l.Percentile(0.99)), ms(l.Percentile(1)))
}
