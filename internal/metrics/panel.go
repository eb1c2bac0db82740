package metrics

import "github.com/prometheus/client_golang/prometheus"

// Panel counts the web panel's live streams on this node.
type Panel struct {
	streams prometheus.Gauge
	refused *prometheus.CounterVec
}

func newPanel(reg prometheus.Registerer) *Panel {
	m := &Panel{
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "panel", Name: "live_streams",
			Help: "Live streams (Server-Sent Events) this node serves now.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "panel", Name: "live_streams_refused_total",
			Help: "Live streams this node answered 503, by limit: node (its cap) or account (one account's share of it).",
		}, []string{"limit"}),
	}
	for _, l := range []string{"node", "account"} {
		m.refused.WithLabelValues(l)
	}
	reg.MustRegister(m.streams, m.refused)
	return m
}

// LiveStreams sets the streams open.
func (m *Panel) LiveStreams(n int) {
	if m != nil {
		m.streams.Set(float64(n))
	}
}

// LiveRefused counts a stream refused by limit (node or account).
func (m *Panel) LiveRefused(limit string) {
	if m != nil {
		m.refused.WithLabelValues(limit).Inc()
	}
}
