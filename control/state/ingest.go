package state

import (
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// IngestBatchMaxEvents and IngestBatchMaxBytes (the encoded IngestBatch)
// bound one IngestBatch so that its entry always fits one Badger
// transaction: an entry that does not fit a fresh transaction would stop
// every node, at every replay. A larger batch is INVALID; the proposer
// splits. With Badger's default options (values up to 1 MiB inline, ~9.6 MB
// per transaction) the worst batch, every field at its longest on top of
// event ids to prune and events to trim, needs under 2 MB
// (TestIngestWorstCaseBatchFits). The Small options (tests) allow ~600 KB
// but keep values over 1 KiB in the value log: ordinary batches fit, a
// worst-case batch only up to about 160 events.
const (
	IngestBatchMaxEvents = 256
	IngestBatchMaxBytes  = 1 << 20
)

// trimSlack is the retention work an IngestBatch may do beyond one probe per
// event, to catch up after retention_count was lowered; the rest is trimmed
// by later batches.
const trimSlack = 256

// acctState is one account as an IngestBatch sees it.
type acctState struct {
	id         string
	acct       *statev1.Account // nil: no such account
	quota      *statev1.Quota
	quotaDirty bool
	monitors   uint64
	countDirty bool
	created    creationWindow  // monitors created by pings this minute
	keys       map[string]bool // key id -> an ingest key of the account
}

// ingest is the apply of one IngestBatch.
type ingest struct {
	txn       *badger.Txn
	ctx       applyCtx
	keep      int64 // retention_count
	trims     int   // retention probes left
	accts     map[string]*acctState
	acctOrder []*acctState
	names     map[string]*monState // account "\x00" ping name
	mons      *monitorCache
	keysUsed  []usedKey // the ingest keys of the batch's events, once each
}

// usedKey is an ingest key that an event of the batch carried.
type usedKey struct{ account, key string }

// applyIngestBatch stores a batch of pings (docs/api.md, Ingest API).
// Events apply in order, each seeing the writes of those
// before it; the result holds one EventResult per event. Per event:
//
//  1. The account must exist. It does, as the receiving node authenticated
//     its key; an account gone in between (or an event without a monitor
//     name, a proposer bug) gets outcome UNSPECIFIED and changes nothing.
//     UNAUTHORIZED when the event's key is no longer an ingest key of the
//     account: the receiving node may not have applied its revocation yet,
//     this entry's state is the authority.
//  2. SUSPENDED when the quota is suspended at the event's receipt time.
//  3. DUPLICATE when the account stored the same event_id within 7 days.
//  4. The ping monitor of that name, created when missing, unless the plan's
//     monitor limit is reached (MONITOR_LIMIT) or the account created its
//     plan's monitors_created_per_minute already in this entry's minute of
//     leader time (MONITOR_RATE).
//  5. A project moves the monitor into it (a project is only the name its
//     monitors carry: there is no project record).
//  6. The event is stored (store), counted in the quota, its id remembered,
//     and the monitor trimmed to retention_count events (trim): STORED,
//     with the quota after counting.
//
// Outcomes other than STORED store nothing and count nothing (a refused
// creation is not counted against the creation rate either).
func applyIngestBatch(txn *badger.Txn, ctx applyCtx, b *raftv1.IngestBatch) (*raftv1.Result, error) {
	// The batch's bounds (IngestBatchMaxEvents, IngestBatchMaxBytes) are
	// checked by CheckCommand before any apply function runs.
	evs := b.GetEvents()
	in := &ingest{
		txn: txn, ctx: ctx, keep: b.GetRetentionCount(), trims: len(evs) + trimSlack,
		accts: map[string]*acctState{}, names: map[string]*monState{},
		mons: newMonitorCache(txn, ctx.values),
	}
	res := &raftv1.Result{Status: raftv1.Status_STATUS_OK, Events: make([]*raftv1.EventResult, len(evs))}
	for i, ev := range evs {
		r, err := in.event(i, ev)
		if err != nil {
			return nil, err
		}
		res.Events[i] = r
	}
	return res, in.flush()
}

func (in *ingest) event(pos int, ev *raftv1.Event) (*raftv1.EventResult, error) {
	a, err := in.account(ev.GetAccountId())
	if err != nil || a.acct == nil || ev.GetMonitor() == "" {
		return &raftv1.EventResult{}, err
	}
	if allowed, err := in.keyAllowed(a, ev.GetKeyId()); err != nil || !allowed {
		return &raftv1.EventResult{Outcome: raftv1.EventOutcome_EVENT_OUTCOME_UNAUTHORIZED}, err
	}
	in.keyUsed(a.id, ev.GetKeyId())
	plan, at := a.acct.GetPlan(), ev.GetReceivedUnixMs()
	quota := quotaStatus(plan, a.quota, at)
	if quota.GetState() == QuotaSuspended {
		return &raftv1.EventResult{Outcome: raftv1.EventOutcome_EVENT_OUTCOME_SUSPENDED, Quota: quota}, nil
	}
	prevID := int64(-1)
	if id := ev.GetEventId(); id != "" {
		dup, prev, err := seenEventID(in.txn, in.ctx.now, a.id, id)
		if err != nil {
			return nil, err
		}
		if dup {
			return &raftv1.EventResult{Outcome: raftv1.EventOutcome_EVENT_OUTCOME_DUPLICATE, Quota: quota}, nil
		}
		prevID = prev
	}
	m, created, refused, err := in.monitor(a, ev.GetMonitor(), pos)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return &raftv1.EventResult{Outcome: refused, Quota: quota}, nil
	}
	if p := ev.GetProject(); p != "" && m.mon.GetProject() != p {
		m.mon.Project, m.dirty = p, true
	}
	if err := in.store(pos, m, ev); err != nil {
		return nil, err
	}
	countEvent(plan, a.quota, at)
	a.quotaDirty = true
	if id := ev.GetEventId(); id != "" {
		if err := rememberEventID(in.txn, in.ctx.now, a.id, id, prevID); err != nil {
			return nil, err
		}
	}
	if err := in.trim(m); err != nil {
		return nil, err
	}
	return &raftv1.EventResult{
		Outcome:     raftv1.EventOutcome_EVENT_OUTCOME_STORED,
		Quota:       quotaStatus(plan, a.quota, at),
		MonitorUuid: m.mon.GetUuid(),
		Created:     created,
	}, nil
}

// account returns the cached account id (acct nil when it does not exist).
func (in *ingest) account(id string) (*acctState, error) {
	if a, ok := in.accts[id]; ok {
		return a, nil
	}
	if a, ok := in.ctx.values.cachedAccount(in.txn, id); ok {
		in.accts[id] = a
		if a.acct != nil {
			in.acctOrder = append(in.acctOrder, a)
		}
		return a, nil
	}
	a := &acctState{id: id}
	in.accts[id] = a
	if id == "" {
		return a, nil
	}
	acct := new(statev1.Account)
	if err := getProto(in.txn, k(prefixAccount, id), acct); errors.Is(err, ErrNotFound) {
		return a, nil
	} else if err != nil {
		return nil, err
	}
	q, err := getQuota(in.txn, id)
	if err != nil {
		return nil, err
	}
	n, err := readUint64(in.txn, monitorCountKey(id))
	if err != nil {
		return nil, err
	}
	a.acct, a.quota, a.monitors = acct, q, n
	in.acctOrder = append(in.acctOrder, a)
	return a, nil
}

// monitor returns the account's ping monitor called name, creating it when
// the plan's monitor limit and creation rate allow (created); when they do
// not, nil and the outcome that says which (MONITOR_LIMIT, MONITOR_RATE).
func (in *ingest) monitor(a *acctState, name string, pos int) (m *monState, created bool, refused raftv1.EventOutcome, err error) {
	nameKey := a.id + "\x00" + name
	if m := in.names[nameKey]; m != nil {
		return m, false, 0, nil
	}
	id, err := in.ctx.values.get(in.txn, monitorNameKey(a.id, KindPing, name))
	if err == nil {
		m, err := in.mons.get(string(id))
		if err == nil && m == nil {
			err = fmt.Errorf("monitor name %q of account %s points to missing monitor %s", name, a.id, id)
		}
		in.names[nameKey] = m
		return m, false, 0, err
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, false, 0, err
	}
	if limit, has := monitorLimit(a.acct.GetPlan()); has && int64(a.monitors) >= limit {
		return nil, false, raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_LIMIT, nil
	}
	if !a.created.loaded {
		// Read only when a monitor is about to be created: most batches
		// create none.
		window, err := readCreationWindow(in.txn, a.id)
		if err != nil {
			return nil, false, 0, err
		}
		a.created = window
	}
	if !a.created.take(in.ctx.now, uint64(MonitorsCreatedPerMinute(a.acct.GetPlan()))) {
		return nil, false, raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_RATE, nil
	}
	mon := &statev1.Monitor{
		Uuid:           newMonitorUUID(in.ctx.index, pos, a.id, name),
		AccountId:      a.id,
		Kind:           KindPing,
		Name:           name,
		Enabled:        true,
		TimeoutSeconds: DefaultPingTimeoutSeconds,
		CreatedUnixMs:  in.ctx.now,
		Ping:           &statev1.PingState{},
	}
	if err := in.ctx.values.set(in.txn, monitorNameKey(a.id, KindPing, name), []byte(mon.Uuid)); err != nil {
		return nil, false, 0, err
	}
	a.monitors++
	a.countDirty = true
	m = in.mons.add(mon)
	m.dirty, m.runsLoaded, m.lowLoaded = true, true, true
	in.names[nameKey] = m
	return m, true, 0, nil
}

// keyUsed notes that an event authenticated by keyID was applied; flush
// records the batch's keys' use.
func (in *ingest) keyUsed(accountID, keyID string) {
	if keyID == "" {
		return
	}
	for _, u := range in.keysUsed {
		if u.key == keyID && u.account == accountID {
			return
		}
	}
	in.keysUsed = append(in.keysUsed, usedKey{accountID, keyID})
}

func (in *ingest) flush() error {
	// The keys' last use, at the entry's time: written only when the one
	// recorded is an hour older (touchKey), so pings cost no write for it.
	for _, u := range in.keysUsed {
		if err := touchKey(in.txn, in.ctx.values, u.account, u.key, in.ctx.now); err != nil {
			return err
		}
	}
	for _, a := range in.acctOrder {
		if a.quotaDirty {
			if err := setProto(in.txn, quotaKey(a.id), a.quota); err != nil {
				return err
			}
		}
		if a.countDirty {
			if err := in.txn.Set(monitorCountKey(a.id), u64(a.monitors)); err != nil {
				return err
			}
		}
		if err := a.created.write(in.txn, a.id); err != nil {
			return err
		}
	}
	for _, a := range in.accts {
		in.ctx.values.stageAccount(in.txn, a)
	}
	return in.mons.flush()
}
