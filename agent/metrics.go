package agent

import (
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
	forwarded       *prometheus.CounterVec
	refused         *prometheus.CounterVec
	executed        *prometheus.CounterVec
	waitingForShare prometheus.Gauge
}

func (m *metrics) Forwarded(kind string, n int) { m.forwarded.WithLabelValues(kind).Add(float64(n)) }
func (m *metrics) Refused(kind, reason string, n int) {
	m.refused.WithLabelValues(kind, reason).Add(float64(n))
}
func (m *metrics) Executed(status string) { m.executed.WithLabelValues(status).Inc() }
func (m *metrics) WaitingForShare(n int)  { m.waitingForShare.Set(float64(n)) }

// newMetrics registers the agent's metrics on reg: counters the parts
// feed, and gauges read from the link, the assignments and the region at
// each scrape. The buffer registers its own (lookout_agent_buffer_*,
// agent/buffer).
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
		waitingForShare: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "checks_waiting_for_share",
			Help: "Check executions due on this agent that wait because their account has its share of the workers under way (--account-check-share).",
		}),
	}
	for _, k := range []string{forward.KindEvent, forward.KindResult} {
		m.forwarded.WithLabelValues(k)
	}
	reg.MustRegister(m.forwarded, m.refused, m.executed, m.waitingForShare)
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
	)
	return m
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
