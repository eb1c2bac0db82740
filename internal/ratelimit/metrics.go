package ratelimit

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts for every Buckets of a process, labelled by the map's
// Name. A nil *Metrics counts nothing.
type Metrics struct {
	keys     *prometheus.GaugeVec
	overflow *prometheus.CounterVec
	swept    *prometheus.CounterVec
	refused  *prometheus.CounterVec
}

// NewMetrics makes the rate-limit metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		keys: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "lookout", Subsystem: "ratelimit", Name: "keys",
			Help: "Keys (client addresses, key ids) with a bucket of their own, by limiter.",
		}, []string{"limiter"}),
		overflow: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lookout", Subsystem: "ratelimit", Name: "overflow_total",
			Help: "Requests of keys that found their limiter at its cap and shared its overflow bucket, by limiter.",
		}, []string{"limiter"}),
		swept: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lookout", Subsystem: "ratelimit", Name: "swept_total",
			Help: "Buckets dropped because they were full again (as good as new), by limiter.",
		}, []string{"limiter"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lookout", Subsystem: "ratelimit", Name: "refused_total",
			Help: "Requests or attempts refused because their bucket was empty, by limiter.",
		}, []string{"limiter"}),
	}
	reg.MustRegister(m.keys, m.overflow, m.swept, m.refused)
	return m
}

// limiterMetrics is Metrics for one limiter; nil counts nothing.
type limiterMetrics struct {
	keyCount                    prometheus.Gauge
	overflows, sweeps, refusals prometheus.Counter
}

func (m *Metrics) forLimiter(name string) *limiterMetrics {
	if m == nil {
		return nil
	}
	return &limiterMetrics{
		keyCount:  m.keys.WithLabelValues(name),
		overflows: m.overflow.WithLabelValues(name),
		sweeps:    m.swept.WithLabelValues(name),
		refusals:  m.refused.WithLabelValues(name),
	}
}

func (m *limiterMetrics) size(n int) {
	if m != nil {
		m.keyCount.Set(float64(n))
	}
}

func (m *limiterMetrics) overflowed() {
	if m != nil {
		m.overflows.Inc()
	}
}

func (m *limiterMetrics) swept(n int) {
	if m != nil && n > 0 {
		m.sweeps.Add(float64(n))
	}
}

func (m *limiterMetrics) refused() {
	if m != nil {
		m.refusals.Inc()
	}
}
