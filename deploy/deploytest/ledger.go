package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"lookout/internal/client"
)

// sent is one event the test sent: its id is both its event_id and its
// message, which the Management API's event list shows.
type sent struct {
	id, phase, monitor string
	// acked: a node or an agent answered 200 {"status":"success"}.
	acked    bool
	attempts int
	via      string // the URL that acknowledged it
	err      error  // the last error when not acked
	at, done time.Time
}

// ledger is every event the test sent, in order.
type ledger struct {
	run string // a random prefix: ids never meet those of another run
	mu  sync.Mutex
	seq int
	all []*sent
}

func (l *ledger) add(phase, monitor string) *sent {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	s := &sent{id: fmt.Sprintf("%s-%s-%05d", l.run, phase, l.seq), phase: phase, monitor: monitor, at: time.Now()}
	l.all = append(l.all, s)
	return s
}

// counts is how many events of phase were sent and acknowledged ("" for
// every phase).
func (l *ledger) counts(phase string) (sentN, ackedN int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.all {
		if phase == "" || s.phase == phase {
			sentN++
			if s.acked {
				ackedN++
			}
		}
	}
	return sentN, ackedN
}

func (l *ledger) snapshot() []sent {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]sent, len(l.all))
	for i, s := range l.all {
		out[i] = *s
	}
	return out
}

// endpoints are the URLs a client sends to, in turn; they change when a
// container restarts with a new address.
type endpoints struct {
	mu   sync.Mutex
	urls []string
	next int
}

func (e *endpoints) set(urls ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.urls = append([]string(nil), urls...)
}

// pick is the next URL, round robin.
func (e *endpoints) pick() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	u := e.urls[e.next%len(e.urls)]
	e.next++
	return u
}

// sender sends events the way `lookout ping` does: every event carries
// its event_id, and network errors, 429, 502, 503 and 504 are retried
// with backoff (honouring Retry-After) for retryFor, each attempt to the
// next endpoint.
type sender struct {
	key      string
	http     *http.Client
	retryFor time.Duration
	// retry401 also retries 401: an agent that has not yet received the
	// account's key hashes from the control plane refuses the key.
	retry401 bool
}

func (s *sender) send(ctx context.Context, l *ledger, to *endpoints, phase, monitor string) *sent {
	ev := l.add(phase, monitor)
	deadline := time.Now().Add(s.retryFor)
	backoff := 200 * time.Millisecond
	for {
		url := to.pick()
		ev.attempts++
		_, err := client.NewIngest(url, s.key, s.http).Ping(ctx, client.Event{
			EventType: "ping", Monitor: monitor, Status: "complete", Message: ev.id, EventID: ev.id, Host: "deploytest",
		})
		l.mu.Lock()
		if err == nil {
			ev.acked, ev.via, ev.err, ev.done = true, url, nil, time.Now()
		} else {
			ev.err = err
		}
		l.mu.Unlock()
		if err == nil || !s.retryable(err) || ctx.Err() != nil {
			return ev
		}
		wait := max(backoff, client.RetryAfter(err))
		if time.Now().Add(wait).After(deadline) {
			return ev
		}
		select {
		case <-ctx.Done():
			return ev
		case <-time.After(wait):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (s *sender) retryable(err error) bool {
	var ae *client.APIError
	if s.retry401 && errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
		return true
	}
	return client.Retryable(err)
}

// tally is what the Management API holds of the events the test sent.
type tally struct {
	acked, stored, unackedStored int
	missing, duplicated          []string
}

// count reads the events of every monitor the test pinged (at most 1,000
// each, the default retention, which the test stays under) and counts the
// test's events among them by their message.
func count(ctx context.Context, m *client.Manage, l *ledger) (tally, error) {
	var t tally
	mons, err := m.AllMonitors(ctx, "ping")
	if err != nil {
		return t, fmt.Errorf("list monitors: %w", err)
	}
	uuids := map[string]string{}
	for _, mf := range mons {
		uuids[mf.Name] = mf.UUID
	}
	seen := map[string]int{}
	read := map[string]bool{}
	evs := l.snapshot()
	for _, s := range evs {
		if read[s.monitor] || uuids[s.monitor] == "" {
			continue
		}
		read[s.monitor] = true
		list, err := m.Events(ctx, uuids[s.monitor], 1000)
		if err != nil {
			return t, fmt.Errorf("events of %s: %w", s.monitor, err)
		}
		for _, e := range list {
			seen[e.Message]++
		}
	}
	for _, s := range evs {
		n := seen[s.id]
		if s.acked {
			t.acked++
		}
		if n > 0 {
			t.stored++
			if !s.acked {
				t.unackedStored++
			}
		}
		switch {
		case n > 1:
			t.duplicated = append(t.duplicated, fmt.Sprintf("%s (%d times)", s.id, n))
		case n == 0 && s.acked:
			t.missing = append(t.missing, s.id)
		}
	}
	sort.Strings(t.missing)
	return t, nil
}
