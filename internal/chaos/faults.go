package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

// The faults of a round, in order.
const (
	faultKillLeader        = "kill-leader"
	faultKillCutLeader     = "kill-cut-leader"
	faultKillAgain         = "kill-again"
	faultPartitionLeader   = "partition-leader"
	faultPartitionFollower = "partition-follower"
	faultPauseLeader       = "pause-leader"
)

// roundFaults are the faults of every round, in order. kill-cut-leader
// leaves the killed leader with entries the others never received, which
// raft clears from its log when it returns as a follower; kill-again
// then kills that same node, whatever its role, as its next start must
// read a log whose tail was cleared.
var roundFaults = []string{faultKillLeader, faultKillCutLeader, faultKillAgain, faultPartitionLeader, faultPartitionFollower, faultPauseLeader}

// fault is one injected fault: when it started, when it was undone (the
// node restarted, the links healed) and how long the cluster then took
// to be healthy again.
type fault struct {
	Round      int
	Kind, Node string
	Mode       string // partitions: hold or drop
	Leader     string // the leader once healthy again
	Start, End time.Duration
	Recovery   time.Duration
	// Failover, for a kill of the leader: from the SIGKILL to the first
	// ping acknowledged after it (any node, any client); 0 when none was.
	Failover time.Duration
	Err      string
}

func (f fault) String() string {
	s := fmt.Sprintf("round %d %-18s %s", f.Round, f.Kind, f.Node)
	if f.Mode != "" {
		s += " (" + f.Mode + ")"
	}
	s += fmt.Sprintf("  t=%6.1fs..%6.1fs", f.Start.Seconds(), f.End.Seconds())
	if f.Err != "" {
		return s + "  FAILED: " + f.Err
	}
	s += fmt.Sprintf("  healthy %.1fs after, leader %s", f.Recovery.Seconds(), f.Leader)
	if f.Failover > 0 {
		s += fmt.Sprintf(", first ping sent after the kill acknowledged %.2fs after it", f.Failover.Seconds())
	}
	return s
}

// faulter injects the faults of each round into a cluster.
type faulter struct {
	c        *cluster
	start    time.Time
	rng      *rand.Rand
	hold     time.Duration // how long a node stays killed or cut off
	settle   time.Duration // quiet time after the cluster is healthy again
	recovery time.Duration // bound on getting healthy again
	out      io.Writer
	faults   []fault
	killed   *node // the node the last kill fault killed
	// acks tells when the first ping after a time was acknowledged.
	acks interface {
		firstAckAfter(time.Time) (time.Time, bool)
	}
}

// rounds runs n rounds of roundFaults; it stops early when the cluster
// does not recover.
func (f *faulter) rounds(ctx context.Context, n int) error {
	for r := 1; r <= n; r++ {
		for i, kind := range roundFaults {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			mode := ""
			if kind == faultPartitionLeader || kind == faultPartitionFollower {
				mode = "hold"
				if (r+i)%2 == 0 {
					mode = "drop"
				}
			}
			ft := f.inject(ctx, r, kind, mode)
			f.faults = append(f.faults, ft)
			fmt.Fprintf(f.out, "%s  %s\n", time.Now().UTC().Format("15:04:05"), ft)
			if ft.Err != "" {
				return fmt.Errorf("%s", ft.Err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(f.settle):
			}
		}
	}
	return nil
}

// inject applies one fault, undoes it and waits for the cluster to be
// healthy.
func (f *faulter) inject(ctx context.Context, round int, kind, mode string) (ft fault) {
	ft = fault{Round: round, Kind: kind, Mode: mode}
	leader, err := f.c.leader(ctx)
	for deadline := time.Now().Add(15 * time.Second); err != nil && time.Now().Before(deadline); {
		sleep(ctx, 500*time.Millisecond) // a slow answer on a loaded machine
		leader, err = f.c.leader(ctx)
	}
	if err != nil {
		ft.Err = err.Error()
		return ft
	}
	target := leader
	switch {
	case kind == faultPartitionFollower:
		var followers []*node
		for _, n := range f.c.nodes {
			if n != leader {
				followers = append(followers, n)
			}
		}
		target = followers[f.rng.IntN(len(followers))]
	case kind == faultKillAgain && f.killed != nil:
		target = f.killed
	}
	ft.Node = target.id
	ft.Start = time.Since(f.start)
	switch kind {
	case faultKillLeader, faultKillCutLeader, faultKillAgain:
		if kind == faultKillCutLeader {
			// Cut off, the leader still appends the writes its clients
			// send it for a moment before it steps down; none reach the
			// others, who elect a leader of their own.
			f.c.net.Isolate(target.id, f.c.ids(), true)
			sleep(ctx, time.Second)
		}
		killedAt := time.Now()
		target.kill()
		f.killed = target
		if target == leader && kind != faultKillCutLeader && f.acks != nil {
			// Measured once the cluster is healthy again (below).
			defer func() {
				if at, ok := f.acks.firstAckAfter(killedAt); ok && ft.Err == "" {
					ft.Failover = at.Sub(killedAt)
				}
			}()
		}
		f.c.net.Heal()
		sleep(ctx, f.hold)
		if err := target.start(f.c.binary); err != nil {
			ft.Err = err.Error()
			return ft
		}
	case faultPauseLeader:
		// SIGSTOP: a process that stalls (a long GC pause, a frozen
		// VM) and wakes up still believing it leads.
		target.pause()
		sleep(ctx, f.hold)
		target.resume()
	default:
		f.c.net.Isolate(target.id, f.c.ids(), mode == "drop")
		sleep(ctx, f.hold)
		f.c.net.Heal()
	}
	ft.End = time.Since(f.start)
	rec, err := f.c.waitHealthy(ctx, f.recovery)
	if err != nil {
		ft.Err = err.Error()
		return ft
	}
	ft.Recovery = rec
	if l, err := f.c.leader(ctx); err == nil {
		ft.Leader = l.id
	}
	return ft
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
