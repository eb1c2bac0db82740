package state

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// MaxChannelHistory is how many deliveries an alert channel's history
// keeps: the newest by the alert's time.
const MaxChannelHistory = 100

// The statuses of a DeliveryRecord.
const (
	DeliveryRetrying  = "retrying"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	DeliveryGivenUp   = "given_up"
)

// historyPrefix is dlv:<account id>:<channel id>:, the history of one
// channel, oldest alert first.
func historyPrefix(accountID, channelID string) []byte {
	return k(prefixDelivery, accountID, channelID, "")
}

func historyKey(accountID, channelID string, occurredMs int64, alertID string) []byte {
	return kb(kb(historyPrefix(accountID, channelID), u64(uint64(max(occurredMs, 0)))), []byte(alertID))
}

// recordHistory writes the outcome of an attempt of delivery d of alert a
// (permanent: the receiver refused it for good) to the history of its
// channel, when d goes to an alert channel of the account (chan:<id>;
// the channels of a group's own have no history). A delivery's first
// record drops the channel's oldest beyond MaxChannelHistory.
func recordHistory(txn *badger.Txn, ctx applyCtx, a *statev1.Alert, d *statev1.Delivery, permanent bool) error {
	channelID, ok := strings.CutPrefix(d.GetChannelRef(), "chan:")
	if !ok {
		return nil
	}
	rec := &statev1.DeliveryRecord{
		AlertId: a.GetId(), AlertType: a.GetType(), OccurredUnixMs: a.GetOccurredUnixMs(),
		MonitorUuid: a.GetMonitorUuid(), MonitorName: a.GetRegion(),
		Error: d.GetLastError(), Attempts: d.GetAttempts(), LastAttemptUnixMs: ctx.now,
	}
	switch {
	case d.GetDelivered():
		rec.Status, rec.Error = DeliveryDelivered, ""
	case d.GetGivenUp() && permanent:
		rec.Status = DeliveryFailed
	case d.GetGivenUp():
		rec.Status = DeliveryGivenUp
	default:
		rec.Status = DeliveryRetrying
	}
	if a.GetMonitorUuid() != "" {
		m, err := getMonitorIn(txn, ctx.values, a.GetMonitorUuid())
		switch {
		case err == nil:
			rec.MonitorName = m.GetName()
		case errors.Is(err, ErrNotFound):
			rec.MonitorName = a.GetEvent().GetEvent().GetMonitor() // gone: what the event said, if any
		default:
			return err
		}
	}
	key := historyKey(a.GetAccountId(), channelID, a.GetOccurredUnixMs(), a.GetId())
	known, err := exists(txn, key)
	if err != nil {
		return err
	}
	if known {
		return setProto(txn, key, rec)
	}
	// The history's keys before this one, oldest first; with it, the
	// oldest beyond MaxChannelHistory go.
	keys, err := historyList(txn, ctx.values, a.GetAccountId(), channelID)
	if err != nil {
		return err
	}
	if err := setProto(txn, key, rec); err != nil {
		return err
	}
	i, _ := slices.BinarySearch(keys, string(key))
	keys = slices.Insert(slices.Clone(keys), i, string(key))
	drop := max(len(keys)-MaxChannelHistory, 0)
	for _, old := range keys[:drop] {
		if err := txn.Delete([]byte(old)); err != nil {
			return err
		}
	}
	ctx.values.stageScan(txn, scanHistory, historyScanKey(a.GetAccountId(), channelID), keys[drop:])
	return nil
}

// historyList returns the keys of a channel's history, oldest first,
// through the valueCache's scans: the keys a record adds and drops are
// staged there (recordHistory), and a command that deletes a history
// (DeleteChannel) drops the scans. Shared: not to be modified.
func historyList(txn *badger.Txn, values *valueCache, accountID, channelID string) ([]string, error) {
	v, err := values.scan(txn, scanHistory, historyScanKey(accountID, channelID), func() (any, error) {
		var out []string
		for _, key := range historyKeys(txn, accountID, channelID) {
			out = append(out, string(key))
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

func historyScanKey(accountID, channelID string) string { return accountID + "\x00" + channelID }

// historyKeys lists the keys of a channel's history, oldest first.
func historyKeys(txn *badger.Txn, accountID, channelID string) [][]byte {
	var keys [][]byte
	it := txn.NewIterator(badger.IteratorOptions{Prefix: historyPrefix(accountID, channelID)})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		keys = append(keys, bytes.Clone(it.Item().Key()))
	}
	return keys
}

// deleteHistory deletes a channel's history.
func deleteHistory(txn *badger.Txn, accountID, channelID string) error {
	for _, key := range historyKeys(txn, accountID, channelID) {
		if err := txn.Delete(key); err != nil {
			return err
		}
	}
	return nil
}

// ChannelHistory returns the delivery history of an alert channel of the
// account, newest alert first (at most MaxChannelHistory records).
func (s *Store) ChannelHistory(accountID, channelID string) ([]*statev1.DeliveryRecord, error) {
	var out []*statev1.DeliveryRecord
	err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, historyPrefix(accountID, channelID), func() *statev1.DeliveryRecord { return new(statev1.DeliveryRecord) },
			func(r *statev1.DeliveryRecord) error { out = append(out, r); return nil })
	})
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}
