package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"lookout/internal/bench"
	"lookout/internal/client"
)

// part is the most monitors one apply creates (state.MaxPutMonitors).
const part = 1000

// readsPerKey is how many reads the benchmark spends of a management
// key's 60 a minute (the rest are its list requests and margin).
const readsPerKey = 50

// account is one account of the burst and its monitors.
type account struct {
	*client.CreatedAccount
	index    int
	monitors int
	// readers are management keys (the account's own first) to read the
	// events back with, enough for one read of each monitor.
	readers []string
}

// jobName is the name of an account's k-th cron job.
func jobName(k int) string { return fmt.Sprintf("cron-%05d", k) }

// setUp makes the accounts, their monitors (hourly cron jobs: no alert
// is due during the benchmark) and extra read keys.
func setUp(ctx context.Context, cl *bench.Cluster, c config) ([]*account, error) {
	t0 := time.Now()
	made, err := cl.MakeAccountsParallel(ctx, c.accounts, c.setupParal)
	if err != nil {
		return nil, err
	}
	accts := make([]*account, c.accounts)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.setupParal)
	for i := range accts {
		a := &account{CreatedAccount: made[i], index: i, monitors: c.monitors/c.accounts + min(1, max(0, c.monitors%c.accounts-i))}
		a.readers = []string{a.ManagementKey}
		accts[i] = a
		node := i % c.nodes
		g.Go(func() error {
			m := client.NewManage("http://"+cl.URLs[node], a.ManagementKey, nil)
			for done := 0; done < a.monitors; done += part {
				if err := applyJobs(gctx, m, done, min(done+part, a.monitors)); err != nil {
					return fmt.Errorf("account %d: %w", i, err)
				}
			}
			for len(a.readers)*readsPerKey < a.monitors {
				err := bench.Retry(gctx, func() error {
					k, err := cl.Admin(node).CreateKey(gctx, a.ID, client.CreateKeyRequest{Type: "management", Name: "reader", Scopes: []string{"read"}})
					if err == nil {
						a.readers = append(a.readers, k.Key)
					}
					return err
				})
				if err != nil {
					return fmt.Errorf("account %d: read key: %w", i, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	fmt.Printf("setup: %d accounts, %d monitors in %s\n", c.accounts, c.monitors, time.Since(t0).Round(time.Millisecond))
	return accts, nil
}

// applyJobs creates the jobs from..to-1 in one apply (apply never
// deletes: the ones before are left alone, reported orphaned).
func applyJobs(ctx context.Context, m *client.Manage, from, to int) error {
	ms := make([]map[string]any, 0, to-from)
	for k := from; k < to; k++ {
		ms = append(ms, map[string]any{"kind": "ping", "name": jobName(k), "schedule": "0 * * * *",
			"grace_seconds": 3600, "timeout_seconds": 3600, "tags": []string{"cron"}})
	}
	b, err := json.Marshal(map[string]any{"manifest_version": 1, "monitors": ms})
	if err != nil {
		return err
	}
	return bench.Retry(ctx, func() error {
		rep, err := m.Apply(ctx, b, false)
		if err == nil && rep.Summary.Create != to-from {
			err = fmt.Errorf("apply created %d of %d", rep.Summary.Create, to-from)
		}
		return err
	})
}
