package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"lookout/internal/bench"
	"lookout/internal/client"
)

// part is the most monitors one apply creates or changes
// (state.MaxPutMonitors).
const part = 1000

// panelPassword is the password of account 0, whose panel page is timed.
const panelPassword = "bench-panel-password"

// account is one account of the load and what it holds.
type account struct {
	*client.CreatedAccount
	index             int
	jobs, due, checks int // ping monitors, of them the deadline burst's, http_checks
	node              int // the node its requests go to
	manage            *client.Manage
	ingest            *client.Ingest
}

// split spreads the monitors, the burst's monitors and the checks over
// c.accounts accounts: account 0 holds c.panelMonitors monitors (checks
// included), the others share the rest evenly.
func split(c config) []account {
	accts := make([]account, c.accounts)
	share := func(total, i, n int) int { return total/n + btoi(i < total%n) }
	big := min(c.panelMonitors, c.monitors)
	if c.accounts == 1 {
		big = c.monitors
	}
	for i := range accts {
		a := &accts[i]
		a.index = i
		a.checks = share(c.checks, i, c.accounts)
		a.due = share(c.deadlines, i, c.accounts)
		if i == 0 {
			a.jobs = big - a.checks
		} else {
			a.jobs = share(c.monitors-big, i-1, c.accounts-1) - a.checks
		}
	}
	return accts
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// setUp makes the accounts (keys, a default webhook channel to the
// receiver each; account 0 a password) on cl.
func setUp(ctx context.Context, cl *bench.Cluster, accts []account, recv *receiver, parallel int) error {
	made, err := cl.MakeAccountsParallel(ctx, len(accts), parallel)
	if err != nil {
		return err
	}
	hook, _ := json.Marshal(map[string]string{"url": recv.url + "/hook"})
	// One pool of connections for every account's requests, big enough
	// for the pings in flight (http.DefaultTransport keeps 2 a host).
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 512, IdleConnTimeout: time.Minute}}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i := range accts {
		a := &accts[i]
		a.CreatedAccount, a.node = made[i], i%len(cl.URLs)
		base := "http://" + cl.URLs[a.node]
		a.manage, a.ingest = client.NewManage(base, a.ManagementKey, hc), client.NewIngest(base, a.IngestKey, hc)
		g.Go(func() error {
			return bench.Retry(gctx, func() error {
				_, err := cl.Admin(a.node).CreateChannel(gctx, a.ID, client.CreateChannelRequest{Type: "webhook", Name: "bench", Config: hook})
				return err
			})
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("webhook channels: %w", err)
	}
	return cl.Admin(0).SetPassword(ctx, accts[0].ID, panelPassword)
}

// load applies every account's bundle, at most part new monitors an
// apply (each a longer prefix of the bundle), parallel accounts at once,
// and prints the progress every 10 s.
func load(ctx context.Context, accts []account, checkURL string, parallel int) (time.Duration, error) {
	var created, total atomic.Int64
	for _, a := range accts {
		total.Add(int64(a.jobs + a.checks))
	}
	start := time.Now()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Second):
			}
			n := created.Load()
			fmt.Printf("  loaded %d of %d monitors, %.0f/s (load average %s)\n", n, total.Load(),
				float64(n)/time.Since(start).Seconds(), bench.LoadAverage())
		}
	}()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i := range accts {
		a := &accts[i]
		g.Go(func() error {
			entries := a.bundle(checkURL, 0)
			for k := part; ; k += part {
				k = min(k, len(entries))
				rep, err := apply(gctx, a.manage, entries[:k])
				if err != nil {
					return fmt.Errorf("account %d: %w", a.index, err)
				}
				created.Add(int64(rep.Summary.Create))
				if k == len(entries) {
					return nil
				}
			}
		})
	}
	err := g.Wait()
	return time.Since(start), err
}

// apply applies entries as one bundle, trying again while the node asks
// to wait.
func apply(ctx context.Context, m *client.Manage, entries []map[string]any) (*client.ApplyReport, error) {
	b, err := json.Marshal(map[string]any{"manifest_version": 1, "monitors": entries})
	if err != nil {
		return nil, err
	}
	var rep *client.ApplyReport
	err = bench.Retry(ctx, func() (err error) {
		rep, err = m.Apply(ctx, b, false)
		return err
	})
	return rep, err
}

// waitReplicated waits until every node has applied what the leader had
// applied when it was called.
func waitReplicated(ctx context.Context, cl *bench.Cluster, nodes int) error {
	st, err := cl.Admin(0).ClusterStatus(ctx)
	if err != nil {
		return err
	}
	var target uint64
	for _, n := range st.Nodes {
		if n.Role == "leader" {
			target = n.AppliedIndex
		}
	}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); {
		st, err := cl.Admin(0).ClusterStatus(ctx)
		if err != nil {
			return err
		}
		behind := 0
		for _, n := range st.Nodes {
			if n.AppliedIndex < target {
				behind++
			}
		}
		if behind == 0 && len(st.Nodes) == nodes {
			return nil
		}
		if err := bench.Sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("nodes did not apply index %d within 5 minutes", target)
}
