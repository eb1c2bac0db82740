package state

import (
	"errors"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/maintenance"
	"lookout/internal/schedule"
)

// Maintenance windows (decisions.md 12): mw:<account id>:<window id> ->
// raftv1.MaintenanceWindow. A window matching a monitor closes its gate
// (quiet.go) while one of its occurrences lasts.

var prefixWindow = []byte("mw:")

// MaxMaintenanceWindows bounds the maintenance windows of one account:
// the gate reads them all when an alert is about to be sent.
const MaxMaintenanceWindows = 100

// CodeWindowLimitReached is the Result code (CONFLICT) of a
// PutMaintenanceWindow creating one more window than MaxMaintenanceWindows.
const CodeWindowLimitReached = maintenance.CodeWindowLimit

func windowKey(accountID, id string) []byte { return k(prefixWindow, accountID, id) }

// windowProblem tells why w cannot be stored ("" when it can): the
// bounds the APIs check, checked again so every node refuses alike.
func windowProblem(w *raftv1.MaintenanceWindow) string {
	m := w.GetMatch()
	switch {
	case w.GetId() == "" || w.GetAccountId() == "" || w.GetName() == "":
		return "id, account_id and name are required"
	case len(m.GetMonitors()) > maintenance.MaxMatchItems || len(m.GetTags()) > maintenance.MaxMatchItems || len(m.GetProjects()) > maintenance.MaxMatchItems:
		return "a match list is too long"
	case w.GetSchedule() == "":
		if w.GetStartsUnixMs() <= 0 || w.GetEndsUnixMs() <= w.GetStartsUnixMs() {
			return "a one-off window needs starts before ends"
		}
	default:
		if _, err := schedule.ParseIn(w.GetSchedule(), w.GetTimezone()); err != nil {
			return "schedule: " + err.Error()
		}
		if d := w.GetDurationSeconds(); d < maintenance.MinDuration || d > maintenance.MaxDuration {
			return "duration_seconds out of range"
		}
	}
	return ""
}

// applyPutMaintenanceWindow creates or replaces a window of an account.
func applyPutMaintenanceWindow(txn *badger.Txn, ctx applyCtx, c *raftv1.PutMaintenanceWindow) (*raftv1.Result, error) {
	w := c.GetWindow()
	if why := windowProblem(w); why != "" {
		return invalid("maintenance window: %s", why), nil
	}
	acct := w.GetAccountId()
	if found, err := exists(txn, k(prefixAccount, acct)); err != nil || !found {
		if err != nil {
			return nil, err
		}
		return notFound("account %s not found", acct), nil
	}
	var prev raftv1.MaintenanceWindow
	err := getProto(txn, windowKey(acct, w.GetId()), &prev)
	switch {
	case err != nil && !errors.Is(err, ErrNotFound):
		return nil, err
	case c.GetCreate() && err == nil:
		return conflict("maintenance window %s exists", w.GetId()), nil
	case !c.GetCreate() && err != nil:
		return notFound("maintenance window %s not found", w.GetId()), nil
	case c.GetCreate():
		n := 0
		if err := scanProto(txn, k(prefixWindow, acct, ""), func() *raftv1.MaintenanceWindow { return new(raftv1.MaintenanceWindow) }, func(*raftv1.MaintenanceWindow) error {
			n++
			return nil
		}); err != nil {
			return nil, err
		}
		if n >= MaxMaintenanceWindows {
			return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Code: CodeWindowLimitReached, Message: "the account has the most maintenance windows allowed"}, nil
		}
		w.CreatedUnixMs = ctx.now
	default:
		w.CreatedUnixMs = prev.GetCreatedUnixMs()
	}
	w.UpdatedUnixMs = ctx.now
	return ok(), setProto(txn, windowKey(acct, w.GetId()), w)
}

// applyDeleteMaintenanceWindow removes a window; the monitors it held are
// judged afresh by the leader (their gate opened).
func applyDeleteMaintenanceWindow(txn *badger.Txn, c *raftv1.DeleteMaintenanceWindow) (*raftv1.Result, error) {
	key := windowKey(c.GetAccountId(), c.GetId())
	if found, err := exists(txn, key); err != nil || !found {
		if err != nil {
			return nil, err
		}
		return notFound("maintenance window %s not found", c.GetId()), nil
	}
	return ok(), txn.Delete(key)
}

// inWindow tells which window of m's account holds m at nowMs ("" for
// none): the first by id that matches it and has an occurrence under way.
func inWindow(txn *badger.Txn, values *valueCache, m *statev1.Monitor, nowMs int64) (*raftv1.MaintenanceWindow, maintenance.Occurrence, error) {
	windows, err := accountWindows(txn, values, m.GetAccountId())
	if err != nil {
		return nil, maintenance.Occurrence{}, err
	}
	at := time.UnixMilli(nowMs)
	for _, w := range windows {
		if !maintenance.Matches(w, m.GetUuid(), m.GetTags(), m.GetProject()) {
			continue
		}
		if o, in := maintenance.Covering(w, at); in {
			return w, o, nil
		}
	}
	return nil, maintenance.Occurrence{}, nil
}

// MaintenanceWindows returns the account's windows, by id.
func (s *Store) MaintenanceWindows(accountID string) ([]*raftv1.MaintenanceWindow, error) {
	var out []*raftv1.MaintenanceWindow
	err := s.view(func(txn *badger.Txn) (err error) {
		out, err = accountWindows(txn, nil, accountID)
		return err
	})
	return out, err
}

// MaintenanceWindow returns one window of the account; ErrNotFound when
// it has none of that id.
func (s *Store) MaintenanceWindow(accountID, id string) (*raftv1.MaintenanceWindow, error) {
	w := new(raftv1.MaintenanceWindow)
	if err := s.view(func(txn *badger.Txn) error { return getProto(txn, windowKey(accountID, id), w) }); err != nil {
		return nil, err
	}
	return w, nil
}

// AllMaintenanceWindows calls fn for every window of every account (the
// deadline engine's cache).
func (s *Store) AllMaintenanceWindows(fn func(*raftv1.MaintenanceWindow) error) error {
	return s.view(func(txn *badger.Txn) error {
		return scanProto(txn, prefixWindow, func() *raftv1.MaintenanceWindow { return new(raftv1.MaintenanceWindow) }, fn)
	})
}

// MonitorInWindow returns the window that holds m at nowMs and the end of
// its occurrence under way (nil: none), as the gate sees it.
func (s *Store) MonitorInWindow(m *statev1.Monitor, nowMs int64) (*raftv1.MaintenanceWindow, time.Time, error) {
	var w *raftv1.MaintenanceWindow
	var o maintenance.Occurrence
	err := s.view(func(txn *badger.Txn) error {
		var err error
		w, o, err = inWindow(txn, nil, m, nowMs)
		return err
	})
	return w, o.End, err
}

// changesWindows tells whether cmd may change maintenance windows.
func changesWindows(cmd *raftv1.Command) bool {
	switch cmd.GetOp().(type) {
	case *raftv1.Command_PutMaintenanceWindow, *raftv1.Command_DeleteMaintenanceWindow:
		return true
	}
	return false
}

// WindowsChanged returns a channel that is closed once an entry that
// changes maintenance windows (or a restore) is applied after the call:
// the deadline engine reads them again then.
func (s *Store) WindowsChanged() <-chan struct{} { return s.windows.changed() }

// broadcast wakes every reader once something changed (the FSM goroutine
// marks it dirty; it is signalled when the transaction's index is
// published).
type broadcast struct {
	mu    sync.Mutex
	ch    chan struct{}
	dirty bool // FSM goroutine only
}

func (b *broadcast) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// publish signals the readers when the applied entries made it dirty.
func (b *broadcast) publish() {
	if !b.dirty {
		return
	}
	b.dirty = false
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}
