package state

import (
	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// The scan part of the valueCache: what raising an alert reads by scanning
// a prefix of its account, the account's default channels (route) and its
// maintenance windows (gate), and what recording a delivery reads, the
// keys of its channel's history (recordHistory, which stages the keys it
// adds and drops). Inside the apply transaction a scan costs
// more than what it reads: Badger sorts every pending write of the
// transaction each time an iterator opens, and a burst of alerts applies
// many of them in one long transaction (an ApplyBatch of FireDeadlines
// entries), so the scans, not the alerts, would take most of the apply.
//
// The rule that keeps it coherent is the accounts' (acctcache.go), with
// its own list of commands: the scans are kept across a run of entries
// whose commands never write chan: or mw: keys, nor dlv: keys but through
// recordHistory (keepsScans); any other
// command drops them before it runs. A scan read in a transaction takes
// effect when that transaction commits, like the values, so a discarded
// transaction's scans are dropped with it.

// maxCachedScans bounds the scans kept; when full it starts over.
const maxCachedScans = 16 << 10

// scanKind is what a cached scan holds.
type scanKind uint8

const (
	scanDefaultChannels scanKind = iota + 1 // []defaultChannel
	scanWindows                             // []*raftv1.MaintenanceWindow
	scanHistory                             // []string: a channel's history keys (history.go)
)

type scanKey struct {
	kind scanKind
	acct string
}

// defaultChannel is a default channel of an account, as an alert's delivery
// names it.
type defaultChannel struct{ ref, typ string }

// scan returns what read (a scan of kind in txn for the account) returns,
// cached. The result is shared: callers must not modify it.
func (c *valueCache) scan(txn *badger.Txn, kind scanKind, acct string, read func() (any, error)) (any, error) {
	if c == nil {
		return read()
	}
	c.own(txn)
	key := scanKey{kind, acct}
	if v, ok := c.pendingScans[key]; ok {
		return v, nil
	}
	if v, ok := c.scans[key]; ok {
		return v, nil
	}
	v, err := read()
	if err != nil {
		return nil, err
	}
	c.pendingScans[key] = v
	return v, nil
}

// stageScan records v as what a scan of kind for acct gives in txn once
// txn commits: a writer of what the scan reads keeps it true.
func (c *valueCache) stageScan(txn *badger.Txn, kind scanKind, acct string, v any) {
	if c == nil {
		return
	}
	c.own(txn)
	c.pendingScans[scanKey{kind, acct}] = v
}

// dropScans forgets every scan, committed and staged: the entry about to
// apply may write what they read.
func (c *valueCache) dropScans() {
	if c == nil {
		return
	}
	clear(c.scans)
	clear(c.pendingScans)
}

// commitScans publishes the staged scans (commit calls it).
func (c *valueCache) commitScans() { publishStaged(c.scans, c.pendingScans, maxCachedScans) }

// keepsScans tells whether cmd leaves the cached scans true: it writes no
// channel (chan:), no maintenance window (mw:) and no delivery history
// (dlv:) but through recordHistory; nor does it write a notification group
// (group:), which ChannelsGeneration relies on. Only the commands
// listed here keep them; every other drops them, so a new command is safe
// until it is listed.
func keepsScans(cmd *raftv1.Command) bool {
	switch cmd.GetOp().(type) {
	case *raftv1.Command_IngestBatch, *raftv1.Command_FireDeadline, *raftv1.Command_FireDeadlines,
		*raftv1.Command_RecordDelivery, *raftv1.Command_RecordDeliveries, *raftv1.Command_RecordExecutions, *raftv1.Command_JudgeAfresh,
		*raftv1.Command_PauseMonitor, *raftv1.Command_MarkAlive, *raftv1.Command_RecordAgentSeen,
		*raftv1.Command_RecordKeyUsed, *raftv1.Command_SetRegionState, *raftv1.Command_PruneEvents,
		*raftv1.Command_PruneAlerts, *raftv1.Command_PutMonitors:
		return true
	}
	return false
}

// defaultChannels returns the account's default channels.
func defaultChannels(txn *badger.Txn, values *valueCache, acct string) ([]defaultChannel, error) {
	v, err := values.scan(txn, scanDefaultChannels, acct, func() (any, error) {
		var out []defaultChannel
		err := scanProto(txn, k(prefixChannel, acct, ""), func() *statev1.Channel { return new(statev1.Channel) }, func(c *statev1.Channel) error {
			if c.GetIsDefault() {
				out = append(out, defaultChannel{ref: "chan:" + c.GetId(), typ: c.GetType()})
			}
			return nil
		})
		return out, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]defaultChannel), nil
}

// accountWindows returns the account's maintenance windows, by id.
func accountWindows(txn *badger.Txn, values *valueCache, acct string) ([]*raftv1.MaintenanceWindow, error) {
	v, err := values.scan(txn, scanWindows, acct, func() (any, error) {
		var out []*raftv1.MaintenanceWindow
		err := scanProto(txn, k(prefixWindow, acct, ""), func() *raftv1.MaintenanceWindow { return new(raftv1.MaintenanceWindow) }, func(w *raftv1.MaintenanceWindow) error {
			out = append(out, w)
			return nil
		})
		return out, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]*raftv1.MaintenanceWindow), nil
}
