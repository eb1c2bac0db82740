package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"time"

	"lookout/internal/client"
	"lookout/internal/manifest"
)

// eventsPerMonitor bounds the events a ping client sends to one monitor,
// below what GET /monitors/{uuid}/events returns at once (1000) and the
// default retention (1000 per monitor).
const eventsPerMonitor = 400

// pingLog is every ping sent: its monitor, and whether a node
// acknowledged it (a 2xx).
type pingLog struct {
	mu      sync.Mutex
	monitor map[string]string // event id -> monitor
	acked   map[string]bool
	acks    []ack          // every acknowledgement, in the order it came
	errs    map[string]int // outcomes of attempts that were not acknowledged
}

// ack is when a ping was acknowledged, and when it was first sent.
type ack struct{ at, sent time.Time }

// firstAckAfter is the time of the first acknowledgement of a ping first
// sent at or after t, false when none came. A ping sent before t and
// acknowledged after it does not count: a leader killed at t may have
// committed it, so its acknowledgement says nothing of the cluster after.
func (l *pingLog) firstAckAfter(t time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := sort.Search(len(l.acks), func(i int) bool { return !l.acks[i].at.Before(t) })
	for ; i < len(l.acks); i++ {
		if !l.acks[i].sent.Before(t) {
			return l.acks[i].at, true
		}
	}
	return time.Time{}, false
}

func newPingLog() *pingLog {
	return &pingLog{monitor: map[string]string{}, acked: map[string]bool{}, errs: map[string]int{}}
}

// pingClient sends pings with unique event ids to random nodes, one at a
// time; a ping that gets no acknowledgement is sent again with the same
// event id (to any node) for up to retryFor, as `lookout ping` does.
type pingClient struct {
	id       int
	key      string
	urls     []string
	log      *pingLog
	httpc    *http.Client
	rng      *rand.Rand
	retryFor time.Duration
}

func (c *pingClient) run(ctx context.Context) {
	for seq := 0; ctx.Err() == nil; seq++ {
		id := fmt.Sprintf("p%d-%d", c.id, seq)
		ev := client.Event{EventType: "ping", Monitor: fmt.Sprintf("chaos-p%d-%d", c.id, seq/eventsPerMonitor),
			Status: "complete", Message: id, EventID: id}
		c.log.mu.Lock()
		c.log.monitor[id] = ev.Monitor
		c.log.mu.Unlock()
		c.send(ctx, ev)
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(20+c.rng.IntN(40)) * time.Millisecond):
		}
	}
}

// send tries ev until it is acknowledged, refused for good, or retryFor
// has passed (or ctx ended).
func (c *pingClient) send(ctx context.Context, ev client.Event) {
	sent := time.Now()
	deadline := sent.Add(c.retryFor)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		url := c.urls[c.rng.IntN(len(c.urls))]
		_, err := client.NewIngest(url, c.key, c.httpc).Ping(ctx, ev)
		c.log.mu.Lock()
		if err == nil {
			c.log.acked[ev.EventID] = true
			c.log.acks = append(c.log.acks, ack{at: time.Now(), sent: sent}) // in order: taken under the lock
			c.log.mu.Unlock()
			return
		}
		c.log.errs[classify(err)]++
		c.log.mu.Unlock()
		if !client.Retryable(err) {
			return
		}
		if client.IsNetworkError(err) {
			continue // no answer (a node down): another node at once
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pingCount is what one node stores of the pings.
type pingCount struct {
	node                      string
	stored, lost, duplicated  int
	foreign, unackedButStored int
	examples                  []string
}

// countPings reads every ping monitor's events through one node (a
// consistent read, so they are that node's state once it has caught up)
// and compares them with the log: every acknowledged ping is stored
// exactly once, and nothing is stored twice or unsent.
func countPings(ctx context.Context, url, mkey string, log *pingLog, httpc *http.Client) (*pingCount, error) {
	m := client.NewManage(url, mkey, httpc)
	var monitors []manifest.Manifest
	err := retry(ctx, func() (err error) {
		monitors, err = m.AllMonitors(ctx, manifest.KindPing)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list monitors: %w", err)
	}
	seen := map[string]int{}
	for _, mf := range monitors {
		var events []client.MonitorEvent
		err := retry(ctx, func() (err error) {
			events, err = m.Events(ctx, mf.UUID, 1000)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("events of %s: %w", mf.Name, err)
		}
		for _, e := range events {
			seen[e.Message]++
		}
	}
	c := &pingCount{node: url}
	log.mu.Lock()
	defer log.mu.Unlock()
	for id, n := range seen {
		c.stored += n
		if _, ok := log.monitor[id]; !ok {
			c.foreign += n
			c.examples = append(c.examples, "foreign "+id)
			continue
		}
		if n > 1 {
			c.duplicated++
			c.examples = append(c.examples, fmt.Sprintf("%s stored %d times", id, n))
		}
		if !log.acked[id] {
			c.unackedButStored++
		}
	}
	for id := range log.acked {
		if seen[id] == 0 {
			c.lost++
			c.examples = append(c.examples, "lost "+id)
		}
	}
	sort.Strings(c.examples)
	if len(c.examples) > 10 {
		c.examples = c.examples[:10]
	}
	return c, nil
}

// retry calls fn until it succeeds, fails for good, or a minute passed.
func retry(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := fn()
		if err == nil || !client.Retryable(err) || time.Now().After(deadline) {
			return err
		}
		wait := max(client.RetryAfter(err), 200*time.Millisecond)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}
