package bench

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"lookout/internal/client"
)

// MakeAccounts creates n accounts whose plans allow any ingest rate and
// the most monitor creations a minute, and returns them (with their keys).
func (c *Cluster) MakeAccounts(ctx context.Context, n int) ([]*client.CreatedAccount, error) {
	return c.MakeAccountsParallel(ctx, n, 1)
}

// MakeAccountsParallel is MakeAccounts with up to workers requests at once,
// spread over the nodes. Account i's e-mail is AccountEmail(i).
func (c *Cluster) MakeAccountsParallel(ctx context.Context, n, workers int) ([]*client.CreatedAccount, error) {
	rate, burst, creations := 1e6, int64(1e6), int64(100_000)
	accts := make([]*client.CreatedAccount, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, workers))
	for i := range n {
		g.Go(func() error {
			return Retry(gctx, func() (err error) {
				accts[i], err = c.Admin(i%len(c.URLs)).CreateAccount(gctx, client.CreateAccountRequest{
					Email: AccountEmail(i),
					Plan:  &client.PlanRequest{IngestRatePerSecond: &rate, IngestBurst: &burst, MonitorsCreatedPerMinute: &creations},
				})
				if err != nil {
					err = fmt.Errorf("create account: %w", err)
				}
				return err
			})
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return accts, nil
}

// AccountEmail is the e-mail of the i-th account MakeAccounts makes.
func AccountEmail(i int) string { return fmt.Sprintf("bench%d@example.com", i) }
