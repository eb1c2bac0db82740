package agent

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"lookout/agent/forward"
	"lookout/agent/link"
)

// namespace and subsystem of the agent's metrics: lookout_agent_*.
const (
	namespace = "lookout"
	subsystem = "agent"
)

// metrics counts what the agent's parts report through their Metrics
// interfaces (forward.Metrics, runner.Metrics).
type metrics struct {
	forwarded *prometheus.CounterVec
	refused   *prometheus.CounterVec
	executed  *prometheus.CounterVec
}

func (m *metrics) Forwarded(kind string, n int) { m.forwarded.WithLabelValues(kind).Add(float64(n)) }
func (m *metrics) Refused(kind, reason string, n int) {
	m.refused.WithLabelValues(kind, reason).Add(float64(n))
}
func (m *metrics) Executed(status string) { m.executed.WithLabelValues(status).Inc() }

// newMetrics registers the agent's metrics on reg: counters the parts
// feed, and gauges read from the link, the assignments, the region and
// the buffer at each scrape.
func newMetrics(reg prometheus.Registerer, a *Agent) *metrics {
	m := &metrics{
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "forwarded_total",
			Help: "Buffered items the control plane stored (a repeat it had stored counts too), by kind (event, result).",
		}, []string{"kind"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "refused_total",
			Help: "Buffered items the control plane refused (logged, then dropped from the buffer), by kind and reason.",
		}, []string{"kind", "reason"}),
		executed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "checks_run_total",
			Help: "Check executions this agent ran and buffered, by verdict (success, failed).",
		}, []string{"status"}),
	}
	for _, k := range []string{forward.KindEvent, forward.KindResult} {
		m.forwarded.WithLabelValues(k)
	}
	reg.MustRegister(m.forwarded, m.refused, m.executed)
	for _, s := range []link.State{link.Disconnected, link.Connected, link.Unauthenticated} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "link_state",
			Help:        "1 for the link's current state (connected, disconnected, unauthenticated: the token was refused), 0 for the others.",
			ConstLabels: prometheus.Labels{"state": s.String()},
		}, func() float64 { return b2f(a.o.Link.State() == s) }))
	}
	held := func(checks bool) func() float64 {
		return func() float64 {
			c, k := a.o.Store.Counts()
			if checks {
				return float64(c)
			}
			return float64(k)
		}
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Subsystem: subsystem, Name: "assignments",
			Help: "Assignments held, by kind (checks, keys).", ConstLabels: prometheus.Labels{"kind": "checks"}}, held(true)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Subsystem: subsystem, Name: "assignments",
			Help: "Assignments held, by kind (checks, keys).", ConstLabels: prometheus.Labels{"kind": "keys"}}, held(false)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Subsystem: subsystem, Name: "region_members",
			Help: "Live agents of the region as this agent sees them, itself included."},
			func() float64 { return float64(len(a.o.Pool.MemberIDs())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Subsystem: subsystem, Name: "buffered",
			Help: "Items waiting in the buffer, by kind (event, result).", ConstLabels: prometheus.Labels{"kind": forward.KindEvent}},
			func() float64 { return float64(a.o.Buffer.Stats().Events) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Subsystem: subsystem, Name: "buffered",
			Help: "Items waiting in the buffer, by kind (event, result).", ConstLabels: prometheus.Labels{"kind": forward.KindResult}},
			func() float64 { return float64(a.o.Buffer.Stats().Results) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Subsystem: subsystem, Name: "buffer_bytes",
			Help: "Bytes the buffer holds."},
			func() float64 { return float64(a.o.Buffer.Stats().Bytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Subsystem: subsystem, Name: "buffer_oldest_age_seconds",
			Help: "Age of the oldest buffered item (0 when the buffer is empty)."},
			func() float64 {
				if ms := a.o.Buffer.Stats().OldestUnixMs; ms > 0 {
					return time.Since(time.UnixMilli(ms)).Seconds()
				}
				return 0
			}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: namespace, Subsystem: subsystem, Name: "buffer_dropped_results_total",
			Help: "Check results dropped, oldest first, because the buffer was full."},
			func() float64 { return float64(a.o.Buffer.Stats().DroppedResults) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: namespace, Subsystem: subsystem, Name: "buffer_refused_full_total",
			Help: "Pings answered 503 buffer_full because the buffer was full."},
			func() float64 { return float64(a.o.Buffer.Stats().RefusedFull) }),
	)
	return m
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
