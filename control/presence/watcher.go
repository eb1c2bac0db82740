package presence

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/metrics"
)

// Defaults of the Watcher.
const (
	// DefaultOfflineAfter is --agent-offline-after's default.
	DefaultOfflineAfter = 60 * time.Second
	// DefaultForgetAfter is --agent-forget-after's default.
	DefaultForgetAfter = 30 * 24 * time.Hour
)

// State is what the Watcher reads of the replicated state (*state.Store).
type State interface {
	Agents() ([]*statev1.Agent, error)
	Regions() ([]*statev1.Region, error)
	RegionAccounts(region string) ([]*raftv1.RegionAccount, error)
	AlertedAccounts(region string) ([]*raftv1.RegionAccount, error)
}

// WatcherOptions configures a Watcher.
type WatcherOptions struct {
	Cluster Applier
	State   State
	// OfflineAfter: a region none of whose agents was seen for this long
	// is offline (default DefaultOfflineAfter). A new leader waits this
	// long after taking office before it declares any region offline.
	OfflineAfter time.Duration
	// ForgetAfter: an agent not seen for this long is forgotten (its
	// record removed through ForgetAgents); 0: never. A new leader
	// forgets nothing before it has been in office for OfflineAfter (the
	// nodes have then written every live agent).
	ForgetAfter time.Duration
	// Tick is how often regions are judged (default 1 s).
	Tick   time.Duration
	Now    func() time.Time
	Logger hclog.Logger
	// Metrics gets the connected agents per region (nil: none).
	Metrics *metrics.Agents
}

// Watcher is the leader's judge of agent regions. Make one per leadership
// term; call Refresh before starting the tasks that ask Held, then Run.
type Watcher struct {
	o     WatcherOptions
	start time.Time

	mu      sync.Mutex
	held    map[string]bool
	changed chan struct{}
}

// NewWatcher makes a Watcher; its term starts now.
func NewWatcher(o WatcherOptions) *Watcher {
	if o.OfflineAfter <= 0 {
		o.OfflineAfter = DefaultOfflineAfter
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return &Watcher{o: o, start: o.Now(), held: map[string]bool{}, changed: make(chan struct{}, 1)}
}

// Held tells whether the monitors of region must not be judged now: the
// region is offline, or none of its agents is connected, or it was held
// and its returning agents have not drained their buffers yet (the pings
// that would move their deadlines may be in them). A connected region
// whose busy agents always have a few events buffered is not held.
// Regions no agent ever reported are not held.
func (w *Watcher) Held(region string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.held[region]
}

// HeldChanged receives when the set of held regions changes (the deadline
// engine judges its monitors again).
func (w *Watcher) HeldChanged() <-chan struct{} { return w.changed }

// Run judges the regions every Tick until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	defer w.o.Metrics.ResetAgents()
	t := time.NewTicker(w.o.Tick)
	defer t.Stop()
	for {
		w.Refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// region is what one pass knows of a region.
type region struct {
	lastSeen  int64 // newest record of any of its agents
	agents    int   // agents recorded, but those being forgotten
	connected int   // agents connected
	draining  bool  // a connected agent has buffered events
	rec       *statev1.Region
}

// Refresh judges every region once: updates Held, and proposes the
// verdicts that are due; first it forgets the agents unseen for
// ForgetAfter, and forgets the regions left without agents instead of
// judging them. Errors are logged; the next pass tries again.
func (w *Watcher) Refresh(ctx context.Context) {
	now := w.o.Now()
	regions, stale, err := w.read(now)
	if err != nil {
		w.o.Logger.Warn("reading agents failed", "error", err)
		return
	}
	w.forgetAgents(ctx, stale)
	held := map[string]bool{}
	for name, r := range regions {
		if r.agents == 0 {
			if r.rec != nil {
				w.forgetRegion(ctx, name)
			}
			continue
		}
		judgeable := r.connected > 0 && !r.draining
		if r.lastSeen > 0 {
			held[name] = r.rec.GetOffline() || r.connected == 0 || (w.Held(name) && !judgeable)
			w.o.Metrics.SetAgentsConnected(name, r.connected)
		}
		if ctx.Err() != nil {
			return
		}
		switch {
		case r.rec != nil && !r.rec.GetNotified():
			w.notify(ctx, name, r.rec.GetOffline(), r.rec.GetSinceUnixMs())
		case !r.rec.GetOffline() && r.lastSeen > 0 && r.connected == 0 &&
			now.UnixMilli()-r.lastSeen >= w.o.OfflineAfter.Milliseconds() && now.Sub(w.start) >= w.o.OfflineAfter:
			w.o.Logger.Warn("agent region offline", "region", name, "last_seen", time.UnixMilli(r.lastSeen).UTC())
			w.notify(ctx, name, true, now.UnixMilli())
		case r.rec.GetOffline() && judgeable:
			w.o.Logger.Info("agent region back online", "region", name)
			w.notify(ctx, name, false, now.UnixMilli())
		}
	}
	w.setHeld(held)
}

// read gathers the agents and verdicts by region, and the agents to
// forget (not counted in their regions).
func (w *Watcher) read(now time.Time) (map[string]*region, []string, error) {
	agents, err := w.o.State.Agents()
	if err != nil {
		return nil, nil, err
	}
	recs, err := w.o.State.Regions()
	if err != nil {
		return nil, nil, err
	}
	forget := w.o.ForgetAfter > 0 && now.Sub(w.start) >= w.o.OfflineAfter
	var stale []string
	// An agent counts as connected while its record is at most
	// state.AgentConnectedWindow old, or OfflineAfter when shorter (then
	// its node records it at least every OfflineAfter/4).
	window := min(state.AgentConnectedWindow, w.o.OfflineAfter).Milliseconds()
	out := map[string]*region{}
	get := func(name string) *region {
		r := out[name]
		if r == nil {
			r = &region{}
			out[name] = r
		}
		return r
	}
	for _, rec := range recs {
		get(rec.GetName()).rec = rec
	}
	for _, a := range agents {
		if forget && now.UnixMilli()-a.GetLastSeenUnixMs() >= w.o.ForgetAfter.Milliseconds() {
			stale = append(stale, a.GetId())
			continue
		}
		r := get(a.GetRegion())
		r.agents++
		r.lastSeen = max(r.lastSeen, a.GetLastSeenUnixMs())
		if a.GetConnected() && now.UnixMilli()-a.GetLastSeenUnixMs() <= window {
			r.connected++
			r.draining = r.draining || a.GetBufferedEvents() > 0
		}
	}
	return out, stale, nil
}

// notify proposes the verdict (offline, since) on region with the accounts
// to alert, MaxRegionAccounts per command, the last one done. An account
// listed again (a former leader's pass) is not alerted twice.
func (w *Watcher) notify(ctx context.Context, name string, offline bool, since int64) {
	var accts []*raftv1.RegionAccount
	var err error
	if offline {
		accts, err = w.o.State.RegionAccounts(name)
	} else {
		accts, err = w.o.State.AlertedAccounts(name)
	}
	if err != nil {
		w.o.Logger.Warn("listing the accounts of a region failed", "region", name, "error", err)
		return
	}
	for {
		n := min(len(accts), state.MaxRegionAccounts)
		cmd := &raftv1.Command{Op: &raftv1.Command_SetRegionState{SetRegionState: &raftv1.SetRegionState{
			Region: name, Offline: offline, SinceUnixMs: since, Accounts: accts[:n], Done: n == len(accts),
		}}}
		res, err := w.o.Cluster.Apply(ctx, cmd)
		if err == nil && res.GetStatus() != raftv1.Status_STATUS_OK {
			w.o.Logger.Error("a region verdict was refused", "region", name, "status", res.GetStatus(), "message", res.GetMessage())
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				w.o.Logger.Warn("proposing a region verdict failed; retrying", "region", name, "error", err)
			}
			return
		}
		if res.GetStale() || n == len(accts) {
			return
		}
		accts = accts[n:]
	}
}

// setHeld publishes the held regions and signals a change. A region no
// longer listed (forgotten) leaves the metrics.
func (w *Watcher) setHeld(held map[string]bool) {
	w.mu.Lock()
	same := len(held) == len(w.held)
	for k, v := range held {
		same = same && w.held[k] == v
	}
	var gone []string
	for k := range w.held {
		if _, ok := held[k]; !ok {
			gone = append(gone, k)
		}
	}
	w.held = held
	w.mu.Unlock()
	for _, name := range gone {
		w.o.Metrics.ForgetRegion(name)
	}
	if !same {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
}
