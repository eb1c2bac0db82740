package main

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"lookout/internal/bench"
	"lookout/internal/client"
	"lookout/internal/manifest"
)

// counts is what reading the events back found.
type counts struct {
	stored, lost, duplicated, unackedStored int
	examples                                []string
}

// readBack reads every monitor's events through the Management API (a
// consistent read on node 1), parallel accounts at once, each with its
// read keys in turn, and compares them with what the jobs sent: every
// acknowledged ping stored exactly once.
func readBack(ctx context.Context, cl *bench.Cluster, accts []*account, jobs []*job, parallel int) (counts, error) {
	var mu sync.Mutex
	seen := map[string]int{} // by event id (the message)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, a := range accts {
		g.Go(func() error {
			base := "http://" + cl.URLs[0]
			var monitors []manifest.Manifest
			err := bench.Retry(gctx, func() (err error) {
				monitors, err = client.NewManage(base, a.readers[0], nil).AllMonitors(gctx, manifest.KindPing)
				return err
			})
			if err != nil {
				return fmt.Errorf("account %d: list: %w", a.index, err)
			}
			for n, mon := range monitors {
				m := client.NewManage(base, a.readers[(n+1)%len(a.readers)], nil)
				var events []client.MonitorEvent
				err := bench.Retry(gctx, func() (err error) {
					events, err = m.Events(gctx, mon.UUID, 100)
					return err
				})
				if err != nil {
					return fmt.Errorf("account %d: events of %s: %w", a.index, mon.Name, err)
				}
				mu.Lock()
				for _, e := range events {
					seen[e.Message]++
				}
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return counts{}, err
	}
	var c counts
	for _, n := range seen {
		c.stored += n
	}
	note := func(format string, args ...any) {
		if len(c.examples) < 10 {
			c.examples = append(c.examples, fmt.Sprintf(format, args...))
		}
	}
	for _, jb := range jobs {
		for _, p := range []struct {
			id    string
			acked bool
		}{{jb.runID, jb.runAcked}, {jb.completeID, jb.completeAcked}} {
			switch n := seen[p.id]; {
			case n > 1:
				c.duplicated++
				note("%s of %s stored %d times", p.id, jb.name, n)
			case n == 0 && p.acked:
				c.lost++
				note("%s of %s acknowledged, not stored", p.id, jb.name)
			case n == 1 && !p.acked:
				c.unackedStored++
			}
		}
	}
	sort.Strings(c.examples)
	return c, nil
}
