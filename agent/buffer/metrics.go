package buffer

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// registerMetrics registers the buffer's metrics on reg (the agent's
// /metrics):
// each is read from Stats when scraped.
func registerMetrics(reg prometheus.Registerer, b *Buffer) {
	gauge := func(name, help string, f func(Stats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "lookout", Subsystem: "agent_buffer", Name: name, Help: help,
		}, func() float64 { return f(b.Stats()) })
	}
	counter := func(name, help string, f func(Stats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "lookout", Subsystem: "agent_buffer", Name: name, Help: help,
		}, func() float64 { return f(b.Stats()) })
	}
	reg.MustRegister(
		gauge("events", "Pings held in the agent's buffer, not yet acknowledged by the control plane.",
			func(s Stats) float64 { return float64(s.Events) }),
		gauge("results", "Check results held in the agent's buffer, not yet acknowledged by the control plane.",
			func(s Stats) float64 { return float64(s.Results) }),
		gauge("bytes", "Bytes the buffered items count against --buffer-max-bytes.",
			func(s Stats) float64 { return float64(s.Bytes) }),
		gauge("max_bytes", "The buffer's bound (--buffer-max-bytes).",
			func(s Stats) float64 { return float64(s.MaxBytes) }),
		gauge("oldest_age_seconds", "Age of the oldest buffered item (0 when the buffer is empty).",
			func(s Stats) float64 {
				if s.OldestUnixMs == 0 {
					return 0
				}
				return max(0, time.Since(time.UnixMilli(s.OldestUnixMs)).Seconds())
			}),
		counter("refused_events_total", "Pings refused because buffered pings filled the buffer (answered 503 buffer_full).",
			func(s Stats) float64 { return float64(s.RefusedFull) }),
		counter("dropped_results_total", "Check results dropped, oldest first, to make room in a full buffer.",
			func(s Stats) float64 { return float64(s.DroppedResults) }),
	)
}
