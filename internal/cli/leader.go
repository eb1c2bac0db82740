package cli

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/cluster"
	"lookout/control/alert"
	"lookout/control/alert/channel"
	"lookout/control/checks"
	"lookout/control/engine"
	"lookout/control/presence"
	"lookout/control/state"
	"lookout/internal/metrics"
)

// leaderTasks is the leader-only work of a control node, started after the
// leader's Barrier and stopped with its leadership: the deadline engine
// (missed and timed-out runs), the alert dispatcher, the retention
// sweeper, the check scheduler, and the judge of agent regions (whose
// verdicts hold the deadline engine's monitors of those regions).
func leaderTasks(cfg *controlConfig, st *state.Store, registry *channel.Registry, publicURL string, met *metrics.Control, log hclog.Logger) []func(context.Context, *cluster.Node) {
	feed := st.NewFeed() // the scheduler's own reader of the change feed
	return []func(context.Context, *cluster.Node){
		func(ctx context.Context, n *cluster.Node) {
			dispatch := alert.NewDispatcher(alert.DispatcherOptions{
				Cluster: n, State: st, Channels: alert.ChannelsFunc(registry.New),
				PanelURL: publicURL, MaxRetryTime: cfg.alertRetryFor, AccountConcurrency: cfg.alertShare.option(),
				Metrics: met.Alerts, Logger: log.Named("dispatch"),
			})
			regions := presence.NewWatcher(presence.WatcherOptions{
				Cluster: n, State: st, OfflineAfter: cfg.agentOfflineAfter, ForgetAfter: cfg.agentForgetAfter,
				Metrics: met.Agents, Logger: log.Named("regions"),
			})
			regions.Refresh(ctx) // Held answers before the engine's rebuild
			deadlines := engine.NewDeadlines(engine.DeadlineOptions{
				Cluster: n, State: st, Logger: log.Named("deadlines"), OnAlerts: dispatch.Notify,
				Held: regions.Held, HeldChanged: regions.HeldChanged(), OutageAfter: cfg.outageAfter,
			})
			var wg sync.WaitGroup
			wg.Add(3)
			go func() { defer wg.Done(); dispatch.Run(ctx) }()
			go func() { defer wg.Done(); deadlines.Run(ctx) }()
			go func() { defer wg.Done(); regions.Run(ctx) }()
			wg.Wait()
		},
		func(ctx context.Context, n *cluster.Node) {
			engine.NewRetention(engine.RetentionOptions{
				Cluster: n, MaxAge: cfg.retentionAge, AlertMaxAge: cfg.alertRetention, AuditMaxAge: cfg.auditRetention, Logger: log.Named("retention"),
			}).Run(ctx)
		},
		func(ctx context.Context, n *cluster.Node) {
			checks.New(checks.Options{
				Cluster: n, State: st, Feed: feed, Version: Version, DialContext: cfg.targets().DialContext,
				RetentionCount: cfg.execRetention, AccountShare: cfg.checkShare.option(),
				Metrics: met.Checks, Logger: log.Named("checks"),
			}).Run(ctx)
		},
	}
}

// recordInterval is how often a node writes an agent whose state did not
// change: presence.DefaultMinInterval, or a quarter of --agent-offline-after
// when that is shorter, so a live agent's record is never old enough to
// look offline.
func recordInterval(offlineAfter time.Duration) time.Duration {
	return min(presence.DefaultMinInterval, offlineAfter/4)
}
