package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"lookout/internal/client"
)

// The backoff of `lookout ping` (internal/cli): the first retry after no
// answer at all goes almost at once, later ones wait from 500 ms doubling
// to 10 s, each jittered down to half, and at least any Retry-After.
const (
	firstNetRetry = 100 * time.Millisecond
	retryBase     = 500 * time.Millisecond
	retryMax      = 10 * time.Second
)

// SendPing sends ev until it is acknowledged, as `lookout ping` does:
// retryable failures (no answer, 429, 5xx) are sent again with its
// backoff until giveUp has passed. ev.EventID should be set, so that an
// attempt that reached the service unbeknown to the sender is not stored
// twice. It returns the attempts made.
func SendPing(ctx context.Context, ing *client.Ingest, ev client.Event, giveUp time.Duration) (int, error) {
	deadline := time.Now().Add(giveUp)
	backoff := retryBase
	for attempt := 1; ; attempt++ {
		_, err := ing.Ping(ctx, ev)
		if err == nil || !client.Retryable(err) || ctx.Err() != nil {
			return attempt, err
		}
		wait := max(jitter(backoff), client.RetryAfter(err))
		if attempt == 1 && client.IsNetworkError(err) {
			wait = jitter(firstNetRetry)
		}
		if time.Now().Add(wait).After(deadline) {
			return attempt, fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		if err := Sleep(ctx, wait); err != nil {
			return attempt, err
		}
		backoff = min(2*backoff, retryMax)
	}
}

// Retry calls fn until it succeeds, fails for good, or a minute has passed
// since its first failure (a call may take longer than that: a restore):
// an answer that asks to wait (429, 503 without a leader) or none at all
// is tried again after the wait asked for (at least 100 ms).
func Retry(ctx context.Context, fn func() error) error {
	var deadline time.Time
	for {
		err := fn()
		if err == nil || !client.Retryable(err) {
			return err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(time.Minute)
		} else if time.Now().After(deadline) {
			return err
		}
		if err := Sleep(ctx, max(100*time.Millisecond, client.RetryAfter(err))); err != nil {
			return err
		}
	}
}

// jitter is a random wait between d/2 and d.
func jitter(d time.Duration) time.Duration { return d/2 + rand.N(d/2+1) }

// Sleep waits d, or until ctx is done (its error).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
