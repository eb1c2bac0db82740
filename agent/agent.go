// Package agent is the edge agent (`lookout agent`): it runs the HTTP and
// TLS checks of its region near private endpoints, accepts pings from
// local jobs, buffers both on disk while cut off, and forwards them when
// the link returns. This package composes the parts:
//
//   - link: the Connect client of the control plane, with URL failover;
//   - assign: the assignments (checks, ingest keys), kept on disk, and the
//     watcher of the control plane's stream;
//   - region: the memberlist pool of the region's agents, and which of
//     them runs each check; it gossips only with the region's key, which
//     the watcher hands it from the stream (and the composition root from
//     the assignments on disk);
//   - runner: the checks on their schedules, verdicts into the buffer;
//   - forward: the buffer drained to the control plane, and heartbeats.
//
// The disk buffer (agent/buffer) and the local ingest listener
// (agent/ingest) are given to it by the composition root (internal/cli)
// through the Buffer interface and Store's KeyByHash. The agent imports
// neither control/ nor cluster/.
package agent

import (
	"context"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"lookout/agent/assign"
	"lookout/agent/forward"
	"lookout/agent/link"
	"lookout/agent/region"
	"lookout/agent/runner"
	"lookout/internal/probe"
)

// Buffer is the agent's disk buffer as the runner (AppendResult) and the
// forwarder (the rest) use it.
type Buffer interface {
	runner.Sink
	forward.Buffer
}

// Options configures the agent. Link, Store, Pool and Buffer are required.
type Options struct {
	// Name is the agent's --name, stamped on its executions.
	Name    string
	Version string
	// Region is the agent's --region: a token of another region is an
	// error.
	Region string
	Link   *link.Client
	Store  *assign.Store
	Pool   *region.Pool
	Buffer Buffer
	// DialContext opens the probes' connections (nil: a plain dialer;
	// lookout agent --deny-private-targets passes a netguard dialer).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Registry gets the agent's metrics (nil: none).
	Registry prometheus.Registerer
	Logger   hclog.Logger
	// AccountShare bounds one account's check executions under way at
	// once (runner.Options.AccountShare).
	AccountShare int

	// Tuning, for tests (zero: the defaults of each part).
	Probers        map[string]probe.Prober
	RetryDelays    []time.Duration
	HeartbeatEvery time.Duration
	ForwardPoll    time.Duration
	Backoff        link.Backoff
	Revoked        time.Duration
}

// Agent is a running edge agent's parts.
type Agent struct {
	o       Options
	watcher *assign.Watcher
	runner  *runner.Runner
	fwd     *forward.Forwarder
}

// New wires the parts; Run starts them.
func New(o Options) *Agent {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	a := &Agent{o: o}
	var met *metrics
	if o.Registry != nil {
		met = newMetrics(o.Registry, a)
	}
	a.watcher = assign.NewWatcher(assign.WatcherOptions{
		Link: o.Link, Store: o.Store, Gossip: o.Pool, Region: o.Region, Backoff: o.Backoff, Revoked: o.Revoked, Logger: o.Logger.Named("assign"),
	})
	ro := runner.Options{
		Checks: o.Store, Owner: o.Pool, Sink: o.Buffer, Agent: o.Name, Version: o.Version,
		Region:  func() string { return first(o.Store.Region(), o.Region) },
		Probers: o.Probers, DialContext: o.DialContext, RetryDelays: o.RetryDelays, Logger: o.Logger.Named("runner"),
		AccountShare: o.AccountShare,
	}
	if met != nil {
		ro.Metrics = met
	}
	a.runner = runner.New(ro)
	fo := forward.Options{
		Buffer: o.Buffer, Control: o.Link, Members: o.Pool, Poll: o.ForwardPoll, Backoff: o.Backoff, Revoked: o.Revoked,
		HeartbeatEvery: o.HeartbeatEvery, Logger: o.Logger.Named("forward"),
	}
	if met != nil {
		fo.Metrics = met
	}
	a.fwd = forward.New(fo)
	return a
}

// Forwarder is the agent's forwarder: Kick after buffering a ping, Quota
// for the local ingest's X-Quota-* headers.
func (a *Agent) Forwarder() *forward.Forwarder { return a.fwd }

// Runner is the agent's check runner (its Stats).
func (a *Agent) Runner() *runner.Runner { return a.runner }

// Run runs the watcher, the runner and the forwarder until ctx ends
// (nil) or the control plane names another region than --region. The
// pool gossips at once with the region's key from the last assignments;
// an agent that never received one gossips once the stream gives it.
func (a *Agent) Run(ctx context.Context) error {
	if key, token := a.o.Store.GossipKey(); len(key) > 0 {
		if err := a.o.Pool.SetKey(key, token); err != nil {
			a.o.Logger.Error("the region's gossip key in the last assignments cannot be used", "error", err)
		}
	}
	if a.o.Pool.State() == region.GossipWaitingForKey {
		a.o.Logger.Warn("this agent has not received its region's gossip key yet: it neither gossips nor meets the region's other agents until it reaches the control plane")
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.watcher.Run(gctx) })
	g.Go(func() error { a.runner.Run(gctx); return nil })
	g.Go(func() error { a.fwd.Run(gctx); return nil })
	return g.Wait()
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
