package state

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// listCache keeps, for the accounts whose lists were read lately, every
// monitor record and check status of the account, as the applied entries
// left them, so that a list (the panel's, of every monitor of an account)
// reads memory rather than the account's records scattered through
// Badger's tables: among a million monitors a large account's records
// share few blocks, and reading ten thousand of them took 150 to 300 ms.
//
// It is kept true by the commits: each commit reports the monitor records
// and check statuses it wrote (valueCache.commit, after the transaction
// committed), and apply puts them into the accounts cached. An account is
// read from the database the first time (a build) and kept until it is
// the least recently listed of too many rows. What a build reads and what
// commits report while it reads can come in either order, so while any
// build runs the commits' changes are also kept in a journal, newest per
// monitor, which the build replays over what it read: a change the build
// missed is in the journal; a change the journal misses was committed
// before the build began, so the build read it. A change replayed that the
// build had already seen newer is put right by the commit that wrote the
// newer one, which reports it after the build has installed the account.
// Restore drops everything, and a build begun before it installs nothing.
//
// Cached records are shared: callers must not modify them.
type listCache struct {
	mu     sync.Mutex
	accts  map[string]*listedAccount
	owner  map[string]string // monitor uuid -> account, of the accounts cached
	rows   int               // monitors cached, over every account
	clock  uint64            // ticks at each list, for the least recently listed
	epoch  uint64            // bumped by reset
	builds int               // builds in flight
	// journal is the changes committed while builds were in flight, by
	// monitor; overflow: it grew past maxJournal (the builds install
	// nothing).
	journal  map[string]*listChange
	overflow bool
}

// listedAccount is one account's monitors, by uuid and in (kind, name)
// order: order holds the rows in that order unless unsorted (a monitor
// was added, removed or renamed since), and may hold removed rows until
// it is sorted again.
type listedAccount struct {
	rows     map[string]*listRow
	order    []*listRow
	unsorted bool
	used     uint64
}

// listRow is a monitor's record and a check's status, decoded when first
// listed after a commit changed them, and the monitor's sort key.
type listRow struct {
	kind, name string
	record     []byte           // the committed record, when monitor is nil
	monitor    *statev1.Monitor // nil: not decoded yet
	status     []byte           // the committed status, when check is nil (nil: none)
	check      *statev1.CheckStatus
	removed    bool
}

// listChange is what commits changed of one monitor while builds ran:
// its record and its check status, the newest of each (nil: unchanged).
type listChange struct{ monitor, status *MonitorChange }

const (
	// maxListedRows bounds the monitors cached over every account: at
	// about 1.5 KiB a decoded record, some 60 MiB.
	maxListedRows = 40_000
	// minListedRows: smaller accounts are read each time (a few ms).
	minListedRows = 500
	// maxJournal bounds the changes kept while builds run.
	maxJournal = 200_000
)

func newListCache() *listCache {
	return &listCache{accts: map[string]*listedAccount{}, owner: map[string]string{}, journal: map[string]*listChange{}}
}

// apply takes a commit's changes (FSM goroutine, after the commit).
func (c *listCache) apply(monitors, statuses []MonitorChange) {
	if len(monitors) == 0 && len(statuses) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.accts) == 0 && c.builds == 0 {
		return
	}
	for i := range monitors {
		ch := &monitors[i]
		if c.builds > 0 {
			c.note(ch.UUID).monitor = ch
		}
		c.setMonitor(ch)
	}
	for i := range statuses {
		ch := &statuses[i]
		if c.builds > 0 {
			c.note(ch.UUID).status = ch
		}
		c.setStatus(ch)
	}
	c.evict() // accounts that grew
}

// note returns the journal's entry for a monitor, making it.
func (c *listCache) note(id string) *listChange {
	lc := c.journal[id]
	if lc == nil {
		if len(c.journal) >= maxJournal {
			c.overflow = true
			clear(c.journal)
		}
		lc = new(listChange)
		c.journal[id] = lc
	}
	return lc
}

// setMonitor puts a changed record into its account, when cached.
func (c *listCache) setMonitor(ch *MonitorChange) {
	acct, ok := c.owner[ch.UUID]
	if !ok && ch.present {
		acct = ch.accountID()
	}
	a := c.accts[acct]
	if a == nil {
		return
	}
	c.setIn(acct, a, ch)
}

// setIn puts a changed record into a cached account.
func (c *listCache) setIn(acct string, a *listedAccount, ch *MonitorChange) {
	row := a.rows[ch.UUID]
	switch {
	case !ch.present && row != nil:
		row.removed, a.unsorted = true, true
		delete(a.rows, ch.UUID)
		delete(c.owner, ch.UUID)
		c.rows--
	case !ch.present:
	case row == nil:
		row = &listRow{kind: ch.Kind(), name: ch.stringField(monitorNameField), record: ch.record}
		a.rows[ch.UUID] = row
		a.order, a.unsorted = append(a.order, row), true
		c.owner[ch.UUID] = acct
		c.rows++
	default:
		row.record, row.monitor = ch.record, nil
		if kind, name := ch.Kind(), ch.stringField(monitorNameField); kind != row.kind || name != row.name {
			row.kind, row.name, a.unsorted = kind, name, true
		}
	}
}

// setStatus puts a changed check status into its account, when cached.
func (c *listCache) setStatus(ch *MonitorChange) {
	a := c.accts[c.owner[ch.UUID]]
	if a == nil {
		return
	}
	if row := a.rows[ch.UUID]; row != nil {
		row.setStatus(ch)
	}
}

func (r *listRow) setStatus(ch *MonitorChange) {
	r.status, r.check = nil, nil
	if ch.present {
		r.status = ch.record
	}
}

// reset forgets every account (the database was replaced).
func (c *listCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.accts)
	clear(c.owner)
	clear(c.journal)
	c.rows, c.overflow = 0, false
	c.epoch++
}

// list returns the account's monitors in (kind, name) order, with the
// check statuses, when the account is cached; ok false when not.
func (c *listCache) list(acct string) (out []ListedMonitor, ok bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.accts[acct]
	if a == nil {
		return nil, false, nil
	}
	c.clock++
	a.used = c.clock
	if a.unsorted {
		a.order = slices.DeleteFunc(a.order, func(r *listRow) bool { return r.removed })
		slices.SortFunc(a.order, func(x, y *listRow) int {
			if d := cmp.Compare(x.kind, y.kind); d != 0 {
				return d
			}
			return cmp.Compare(x.name, y.name)
		})
		a.unsorted = false
	}
	out = make([]ListedMonitor, 0, len(a.order))
	for _, row := range a.order {
		if row.monitor == nil {
			m := new(statev1.Monitor)
			if err := proto.Unmarshal(row.record, m); err != nil {
				return nil, false, fmt.Errorf("decode a monitor of account %s: %w", acct, err)
			}
			row.monitor, row.record = m, nil
		}
		lm := ListedMonitor{Monitor: row.monitor}
		if row.monitor.GetKind() != KindPing {
			if row.check == nil {
				cs := new(statev1.CheckStatus)
				if err := proto.Unmarshal(row.status, cs); err != nil {
					return nil, false, fmt.Errorf("decode the status of check %s: %w", row.monitor.GetUuid(), err)
				}
				row.check, row.status = cs, nil
			}
			lm.Check = row.check
		}
		out = append(out, lm)
	}
	return out, true, nil
}

// buildStart marks a build in flight; the token goes to buildEnd.
func (c *listCache) buildStart() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.builds++
	return c.epoch
}

// buildEnd installs what a build read of the account (its records and
// check statuses, as read), with the journal replayed over it, unless the
// database was replaced or the journal overflowed meanwhile, or the
// account is too small or too large to keep. read is nil when the build
// failed.
func (c *listCache) buildEnd(epoch uint64, acct string, read []ListedMonitor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.builds--
	defer func() {
		if c.builds == 0 {
			clear(c.journal)
			c.overflow = false
		}
	}()
	if read == nil || epoch != c.epoch || c.overflow || c.accts[acct] != nil ||
		len(read) < minListedRows || len(read) > maxListedRows {
		return
	}
	a := &listedAccount{rows: make(map[string]*listRow, len(read)), order: make([]*listRow, 0, len(read))}
	for _, lm := range read { // in (kind, name) order
		row := &listRow{kind: lm.Monitor.GetKind(), name: lm.Monitor.GetName(), monitor: lm.Monitor, check: lm.Check}
		a.rows[lm.Monitor.GetUuid()] = row
		a.order = append(a.order, row)
	}
	c.accts[acct] = a
	for id := range a.rows {
		c.owner[id] = acct
	}
	c.rows += len(a.rows)
	for id, lc := range c.journal {
		if lc.monitor != nil {
			if _, mine := a.rows[id]; mine || (lc.monitor.present && lc.monitor.accountID() == acct) {
				c.setIn(acct, a, lc.monitor)
			}
		}
		if lc.status != nil {
			if row := a.rows[id]; row != nil {
				row.setStatus(lc.status)
			}
		}
	}
	c.clock++
	a.used = c.clock
	c.evict()
}

// evict drops the least recently listed accounts while the rows exceed
// maxListedRows.
func (c *listCache) evict() {
	for c.rows > maxListedRows && len(c.accts) > 0 {
		var oldest string
		var used uint64
		for id, a := range c.accts {
			if oldest == "" || a.used < used {
				oldest, used = id, a.used
			}
		}
		for id := range c.accts[oldest].rows {
			delete(c.owner, id)
		}
		c.rows -= len(c.accts[oldest].rows)
		delete(c.accts, oldest)
	}
}
