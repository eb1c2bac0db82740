// Package metrics holds the Prometheus metrics of a control node. The
// composition root makes one registry, builds a Control on it and hands
// each part to the subsystem that counts it (through its Options); no
// metric lives in a package variable and nothing uses Prometheus' default
// registry. Every method is safe on a nil receiver and then does nothing,
// so a subsystem made without metrics (most tests) needs no stub.
package metrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// namespace prefixes every metric of Lookout.
const namespace = "lookout"

// Control is every metric of a control node.
type Control struct {
	Ingest  *Ingest
	Cluster *Cluster
	Alerts  *Alerts
	Checks  *Checks
	Agents  *Agents
	Panel   *Panel
}

// NewRegistry returns a registry with the Go runtime and process
// collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// NewControl makes the metrics of a control node and registers them on
// reg.
func NewControl(reg prometheus.Registerer) *Control {
	return &Control{
		Ingest:  newIngest(reg),
		Cluster: newCluster(reg),
		Alerts:  newAlerts(reg),
		Checks:  newChecks(reg),
		Agents:  newAgents(reg),
		Panel:   newPanel(reg),
	}
}

// Ingest counts the Ingest API's events and the batcher's batches.
type Ingest struct {
	events    *prometheus.CounterVec
	batches   *prometheus.CounterVec
	batchSize prometheus.Histogram
}

func newIngest(reg prometheus.Registerer) *Ingest {
	m := &Ingest{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "ingest", Name: "events_total",
			Help: "Pings answered by this node, by outcome: stored, duplicate, suspended, monitor_limit, monitor_rate (accepted by the state machine or refused by it), unauthorized, rate_limited, invalid (refused before raft), unavailable, error.",
		}, []string{"outcome"}),
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "ingest", Name: "batches_total",
			Help: "Ingest batches this node proposed through raft, by result (ok, error).",
		}, []string{"result"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "ingest", Name: "batch_events",
			Help:    "Events per ingest batch this node proposed.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
		}),
	}
	reg.MustRegister(m.events, m.batches, m.batchSize)
	return m
}

// Event counts one ping answered with outcome.
func (m *Ingest) Event(outcome string) {
	if m != nil {
		m.events.WithLabelValues(outcome).Inc()
	}
}

// Batch counts one proposed batch of n events and whether it was applied.
func (m *Ingest) Batch(n int, ok bool) {
	if m == nil {
		return
	}
	m.batchSize.Observe(float64(n))
	m.batches.WithLabelValues(result(ok)).Inc()
}

// Cluster times this node's raft applies and counts leader changes.
type Cluster struct {
	apply         *prometheus.HistogramVec
	leaderChanges prometheus.Counter
}

func newCluster(reg prometheus.Registerer) *Cluster {
	m := &Cluster{
		apply: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "raft", Name: "apply_duration_seconds",
			Help:    "Time from a command's proposal on this node to its result (committed and applied), forwarding to the leader and waiting for one included, by result (ok, error).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"result"}),
		leaderChanges: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "raft", Name: "leader_changes_total",
			Help: "Times this node saw raft elect a new leader (itself or another).",
		}),
	}
	reg.MustRegister(m.apply, m.leaderChanges)
	return m
}

// Apply records one Apply that took d and ended with err.
func (m *Cluster) Apply(d time.Duration, err error) {
	if m != nil {
		m.apply.WithLabelValues(result(err == nil)).Observe(d.Seconds())
	}
}

// LeaderChange counts one new leader.
func (m *Cluster) LeaderChange() {
	if m != nil {
		m.leaderChanges.Inc()
	}
}

// Alerts counts the leader's alert deliveries by channel type.
type Alerts struct {
	queued, delivered, failed, givenUp *prometheus.CounterVec
	waitingForShare                    prometheus.Gauge
}

func newAlerts(reg prometheus.Registerer) *Alerts {
	vec := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "alert", Name: name, Help: help,
		}, []string{"channel"})
	}
	m := &Alerts{
		queued:    vec("deliveries_queued_total", "Alert deliveries this node, as leader, took from the outbox for their first attempt, by channel type."),
		delivered: vec("deliveries_delivered_total", "Alert deliveries this node delivered and recorded, by channel type."),
		failed:    vec("deliveries_failed_total", "Failed alert delivery attempts this node recorded (to be retried or given up), by channel type."),
		givenUp:   vec("deliveries_given_up_total", "Alert deliveries this node gave up (a permanent error or past the retry time), by channel type; each is also counted as failed."),
		waitingForShare: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "alert", Name: "deliveries_waiting_for_share",
			Help: "Due alert deliveries the last read of the outbox on this node, as leader, left because their account has its share of the delivery slots under way (--account-alert-share).",
		}),
	}
	reg.MustRegister(m.queued, m.delivered, m.failed, m.givenUp, m.waitingForShare)
	return m
}

// WaitingForShare sets the deliveries the last pass left for their
// account's share.
func (m *Alerts) WaitingForShare(n int) {
	if m != nil {
		m.waitingForShare.Set(float64(n))
	}
}

// Queued counts a delivery's first attempt.
func (m *Alerts) Queued(channel string) {
	if m != nil {
		m.queued.WithLabelValues(channelLabel(channel)).Inc()
	}
}

// Delivered counts a delivered delivery.
func (m *Alerts) Delivered(channel string) {
	if m != nil {
		m.delivered.WithLabelValues(channelLabel(channel)).Inc()
	}
}

// Failed counts a failed attempt; givenUp when it was the last.
func (m *Alerts) Failed(channel string, givenUp bool) {
	if m == nil {
		return
	}
	m.failed.WithLabelValues(channelLabel(channel)).Inc()
	if givenUp {
		m.givenUp.WithLabelValues(channelLabel(channel)).Inc()
	}
}

// Checks counts the checks the control plane ran to a verdict.
type Checks struct {
	runs            *prometheus.CounterVec
	waitingForShare prometheus.Gauge
}

func newChecks(reg prometheus.Registerer) *Checks {
	m := &Checks{runs: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: "checks", Name: "runs_total",
		Help: "Check executions this node, as leader, ran to a recorded verdict, by status (success, failed).",
	}, []string{"status"}),
		waitingForShare: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "checks", Name: "waiting_for_share",
			Help: "Check executions due on this node, as leader, that wait because their account has its share of the workers under way (--account-check-share).",
		})}
	reg.MustRegister(m.runs, m.waitingForShare)
	return m
}

// WaitingForShare sets the executions waiting for their account's share.
func (m *Checks) WaitingForShare(n int) {
	if m != nil {
		m.waitingForShare.Set(float64(n))
	}
}

// Run counts one execution recorded with status.
func (m *Checks) Run(status string) {
	if m != nil {
		m.runs.WithLabelValues(status).Inc()
	}
}

func result(ok bool) string {
	if ok {
		return "ok"
	}
	return "error"
}

// channelLabel is the channel type as a label; a delivery whose channel is
// gone has none.
func channelLabel(typ string) string {
	if typ == "" {
		return "unknown"
	}
	return strings.ToLower(typ)
}

// Agents is what the leader knows of the edge agents, what this node
// refused of them, and what its presence recorder keeps of them.
type Agents struct {
	connected *prometheus.GaugeVec
	refused   *prometheus.CounterVec
	tracked   prometheus.Gauge
	untracked prometheus.Counter
}

func newAgents(reg prometheus.Registerer) *Agents {
	m := &Agents{
		connected: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "agents", Name: "connected",
			Help: "Edge agents connected to the control plane, by region (reported by the leader; 0 elsewhere).",
		}, []string{"region"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "agents", Name: "refused_total",
			Help: "Events and check executions agents sent that this node refused, by kind (event, execution) and reason (account: of an account the agent's token does not serve; receipt_time: received before the token was made or more than 5 minutes ahead).",
		}, []string{"kind", "reason"}),
		tracked: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "agents", Name: "recorder_tracked",
			Help: "Agents whose last record this node remembers, to throttle their heartbeats' writes (at most presence.MaxTracked).",
		}),
		untracked: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "agents", Name: "recorder_untracked_total",
			Help: "Heartbeats written unthrottled because this node already remembered presence.MaxTracked agents.",
		}),
	}
	reg.MustRegister(m.connected, m.refused, m.tracked, m.untracked)
	return m
}

// Refused counts one event or execution (kind) an agent sent that was
// refused for reason.
func (m *Agents) Refused(kind, reason string) {
	if m != nil {
		m.refused.WithLabelValues(kind, reason).Inc()
	}
}

// SetTracked sets the agents the presence recorder remembers.
func (m *Agents) SetTracked(n int) {
	if m != nil {
		m.tracked.Set(float64(n))
	}
}

// Untracked counts a heartbeat written unthrottled (the recorder is full).
func (m *Agents) Untracked() {
	if m != nil {
		m.untracked.Inc()
	}
}

// SetAgentsConnected sets the agents connected in region.
func (m *Agents) SetAgentsConnected(region string, n int) {
	if m != nil {
		m.connected.WithLabelValues(region).Set(float64(n))
	}
}

// ForgetRegion drops a region that has no agent left.
func (m *Agents) ForgetRegion(region string) {
	if m != nil {
		m.connected.DeleteLabelValues(region)
	}
}

// ResetAgents forgets every region (leadership lost).
func (m *Agents) ResetAgents() {
	if m != nil {
		m.connected.Reset()
	}
}
