package state

import "sync"

// maxWatched bounds the changed monitors remembered between two reads;
// past it, the reader is told to reread everything.
const maxWatched = 100_000

// changeWatch tells the leader's engines what the applied entries changed:
// which monitors (their deadlines may have moved) and whether alerts were
// raised (the dispatcher has work). It is only a hint beside the state: a
// reader that was not watching rebuilds from the state itself.
type changeWatch struct {
	mu       sync.Mutex
	on       bool
	monitors map[string]struct{}
	overflow bool
	alerts   bool
	ch       chan struct{}
	// feeds are further readers (Store.NewFeed); set under mu.
	feeds []*changeWatch
}

func newChangeWatch() *changeWatch {
	return &changeWatch{monitors: map[string]struct{}{}, ch: make(chan struct{}, 1)}
}

// Watch turns change tracking on (a node that became leader) or off.
func (s *Store) Watch(on bool) { s.watch.setOn(on) }

// Feed is a further reader of the change feed, for a second leader task
// (the check scheduler) beside the deadline engine, which reads the
// Store's own: each reader takes its own changes.
type Feed struct{ w *changeWatch }

// NewFeed adds a reader of the change feed; it is off until Watch(true).
func (s *Store) NewFeed() *Feed {
	f := newChangeWatch()
	s.watch.mu.Lock()
	s.watch.feeds = append(s.watch.feeds, f)
	s.watch.mu.Unlock()
	return &Feed{w: f}
}

// Watch turns the feed's change tracking on or off.
func (f *Feed) Watch(on bool) { f.w.setOn(on) }

// Changed is signalled after entries that changed monitors were applied
// while the feed watched.
func (f *Feed) Changed() <-chan struct{} { return f.w.ch }

// TakeChanges returns and forgets what changed since the last call, as
// Store.TakeChanges does.
func (f *Feed) TakeChanges() (monitors []string, overflow, alerts bool) { return f.w.take() }

func (w *changeWatch) setOn(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.on = on
	clear(w.monitors)
	w.overflow, w.alerts = false, false
}

// Changed is signalled (never blocking) after entries that changed
// monitors or raised alerts were applied while watching.
func (s *Store) Changed() <-chan struct{} { return s.watch.ch }

// TakeChanges returns and forgets what changed since the last call: the
// monitors, whether there were too many to list (reread all), and whether
// alerts were raised.
func (s *Store) TakeChanges() (monitors []string, overflow, alerts bool) { return s.watch.take() }

func (w *changeWatch) take() (monitors []string, overflow, alerts bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range w.monitors {
		monitors = append(monitors, id)
	}
	clear(w.monitors)
	overflow, alerts = w.overflow, w.alerts
	w.overflow, w.alerts = false, false
	return monitors, overflow, alerts
}

// publish records a commit's changes (FSM goroutine).
func (w *changeWatch) publish(monitors []string, alerts, all bool) {
	if len(monitors) == 0 && !alerts && !all {
		return
	}
	w.mu.Lock()
	feeds := w.feeds
	if !w.on {
		w.mu.Unlock()
		for _, f := range feeds {
			f.publish(monitors, alerts, all)
		}
		return
	}
	for _, id := range monitors {
		if len(w.monitors) >= maxWatched {
			w.overflow = true
			break
		}
		w.monitors[id] = struct{}{}
	}
	w.overflow = w.overflow || all
	w.alerts = w.alerts || alerts || all
	w.mu.Unlock()
	for _, f := range feeds {
		f.publish(monitors, alerts, all)
	}
	select {
	case w.ch <- struct{}{}:
	default:
	}
}
