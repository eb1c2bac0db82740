package state

import (
	"fmt"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

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
	monitors map[string]MonitorChange // the newest change of each
	overflow bool
	alerts   bool
	ch       chan struct{}
	// feeds are further readers (Store.NewFeed); set under mu.
	feeds []*changeWatch
}

func newChangeWatch() *changeWatch {
	return &changeWatch{monitors: map[string]MonitorChange{}, ch: make(chan struct{}, 1)}
}

// MonitorChange is a monitor record an applied entry wrote or deleted, as
// committed: the change feed carries it so that a reader need not read the
// monitor back from the database.
type MonitorChange struct {
	// UUID is the monitor's.
	UUID    string
	record  []byte // the committed record, shared: never modified
	present bool   // false: deleted
}

// Monitor decodes the committed record; an error wrapping ErrNotFound
// when the entry deleted the monitor. Each call returns a fresh copy.
func (c MonitorChange) Monitor() (*statev1.Monitor, error) {
	if !c.present {
		return nil, fmt.Errorf("monitor %s: %w", c.UUID, ErrNotFound)
	}
	m := new(statev1.Monitor)
	if err := proto.Unmarshal(c.record, m); err != nil {
		return nil, fmt.Errorf("decode monitor %s: %w", c.UUID, err)
	}
	return m, nil
}

// The field numbers of Monitor.kind, .name and .account_id.
var (
	monitorKindField    = (*statev1.Monitor)(nil).ProtoReflect().Descriptor().Fields().ByName("kind").Number()
	monitorNameField    = (*statev1.Monitor)(nil).ProtoReflect().Descriptor().Fields().ByName("name").Number()
	monitorAccountField = (*statev1.Monitor)(nil).ProtoReflect().Descriptor().Fields().ByName("account_id").Number()
)

// Kind is the changed monitor's kind, read from its record without
// decoding the rest (a reader that wants one kind skips the others
// cheaply); "" when the entry deleted the monitor or the record cannot be
// read.
func (c MonitorChange) Kind() string { return c.stringField(monitorKindField) }

// accountID is the changed monitor's account, read as Kind is.
func (c MonitorChange) accountID() string { return c.stringField(monitorAccountField) }

// stringField reads a string field of the record without decoding the
// rest; "" when absent, deleted or unreadable. The records are written
// with a deterministic marshal, which writes each field once, so the
// first occurrence is the field's value (and the fields read here come
// first in the record).
func (c MonitorChange) stringField(field protowire.Number) string {
	if !c.present {
		return ""
	}
	for b := c.record; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if num == field && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return ""
			}
			return string(v)
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return ""
		}
		b = b[n:]
	}
	return ""
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

// TakeMonitorChanges returns and forgets what changed since the last call,
// as Store.TakeMonitorChanges does.
func (f *Feed) TakeMonitorChanges() (monitors []MonitorChange, overflow, alerts bool) {
	return f.w.takeRecords()
}

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

// TakeMonitorChanges is TakeChanges with each changed monitor's record as
// its newest applied entry left it, so that the reader (the deadline
// engine) need not read it back.
func (s *Store) TakeMonitorChanges() (monitors []MonitorChange, overflow, alerts bool) {
	return s.watch.takeRecords()
}

// take is takeRecords with the monitors' ids only.
func (w *changeWatch) take() (monitors []string, overflow, alerts bool) {
	changes, overflow, alerts := w.takeRecords()
	for _, c := range changes {
		monitors = append(monitors, c.UUID)
	}
	return monitors, overflow, alerts
}

func (w *changeWatch) takeRecords() (monitors []MonitorChange, overflow, alerts bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	monitors = make([]MonitorChange, 0, len(w.monitors))
	for _, c := range w.monitors {
		monitors = append(monitors, c)
	}
	clear(w.monitors)
	overflow, alerts = w.overflow, w.alerts
	w.overflow, w.alerts = false, false
	return monitors, overflow, alerts
}

// publish records a commit's changes (FSM goroutine).
func (w *changeWatch) publish(monitors []MonitorChange, alerts, all bool) {
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
	for _, c := range monitors {
		if _, ok := w.monitors[c.UUID]; !ok && len(w.monitors) >= maxWatched {
			w.overflow = true
			break
		}
		w.monitors[c.UUID] = c
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
