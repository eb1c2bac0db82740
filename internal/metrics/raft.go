package metrics

import (
	"strings"

	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// raft v1.8.0 reports its own metrics only to hashicorp/go-metrics'
// process-wide global sink (metrics.IncrCounter and friends, with no sink
// per raft instance), so wiring go-metrics' Prometheus sink would need
// that global. The essentials are read from raft.Stats at each scrape
// instead.

// RaftStats returns raft's Stats map (raft.Raft.Stats).
type RaftStats func() map[string]string

// raftCollector turns raft.Stats into gauges at each scrape.
type raftCollector struct {
	stats RaftStats

	state, term, commitIndex, appliedIndex, lastLogIndex, lastContact, peers *prometheus.Desc
}

// raftStates are the values of the state stat, in raft's order.
var raftStates = []string{"Follower", "Candidate", "Leader", "Shutdown"}

// NewRaftCollector returns a collector of the node's raft state, term,
// commit, applied and last log indexes, last contact with the leader and
// peer count, read from stats at each scrape.
func NewRaftCollector(stats RaftStats) prometheus.Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(namespace+"_raft_"+name, help, labels, nil)
	}
	return &raftCollector{
		stats:        stats,
		state:        d("state", "1 for this node's raft state (follower, candidate, leader, shutdown), 0 for the others.", "state"),
		term:         d("term", "This node's current raft term."),
		commitIndex:  d("commit_index", "The highest raft log index this node knows to be committed."),
		appliedIndex: d("applied_index", "The highest raft log index this node applied to its state."),
		lastLogIndex: d("last_log_index", "The last index in this node's raft log."),
		lastContact:  d("last_contact_seconds", "Seconds since this node last heard from the leader (0 on the leader, -1 never)."),
		peers:        d("peers", "Other voters in this node's raft configuration."),
	}
}

// Describe implements prometheus.Collector.
func (c *raftCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.state, c.term, c.commitIndex, c.appliedIndex, c.lastLogIndex, c.lastContact, c.peers} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *raftCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	for _, st := range raftStates {
		v := 0.0
		if s["state"] == st {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, v, strings.ToLower(st))
	}
	for desc, key := range map[*prometheus.Desc]string{
		c.term: "term", c.commitIndex: "commit_index", c.appliedIndex: "applied_index",
		c.lastLogIndex: "last_log_index", c.peers: "num_peers",
	} {
		if v, err := strconv.ParseUint(s[key], 10, 64); err == nil {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(v))
		}
	}
	ch <- prometheus.MustNewConstMetric(c.lastContact, prometheus.GaugeValue, lastContact(s))
}

// lastContact reads raft's last_contact stat: "never", "0" on the leader,
// or a duration.
func lastContact(s map[string]string) float64 {
	switch v := s["last_contact"]; v {
	case "never", "":
		return -1
	case "0":
		return 0
	default:
		d, err := time.ParseDuration(v)
		if err != nil {
			return -1
		}
		return d.Seconds()
	}
}
