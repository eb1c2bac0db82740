package state

import (
	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// The bounds of the deliveries one command gives up when a channel or a
// notification group is deleted or changed: it rewrites alert records
// until it has written MaxGiveUpBytes (keys and values, counted in full)
// or made MaxGiveUpWrites writes, so that it fits any transaction. Any
// left are given up by the dispatcher when they come due, without being
// sent: their channel is gone or changed (control/alert).
const (
	MaxGiveUpBytes  = 256 << 10
	MaxGiveUpWrites = 1000
)

// giveUpDeliveries gives up the open deliveries whose channel_ref match
// says is gone, within the bounds above, recording reason as their error;
// an alert left with no open delivery is finished at the command's time.
// It returns how many deliveries it gave up. It reads the keys of the
// whole due index (no value): there is no index of deliveries by channel,
// and channels and groups change rarely.
func giveUpDeliveries(txn *badger.Txn, ctx applyCtx, reason string, match func(ref string) bool) (int, error) {
	var ids []string
	seen := map[string]bool{}
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixAlertDue})
	for it.Rewind(); it.Valid() && len(ids) < MaxGiveUpWrites; it.Next() {
		due, err := parseAlertDueKey(it.Item().Key())
		if err != nil {
			it.Close()
			return 0, err
		}
		if match(due.ChannelRef) && !seen[due.AlertID] {
			seen[due.AlertID] = true
			ids = append(ids, due.AlertID)
		}
	}
	it.Close()
	size, writes := 0, 0
	write := func(key []byte, value int) {
		size += len(key) + value + 12
		writes++
	}
	n := 0
	for _, id := range ids {
		if size >= MaxGiveUpBytes || writes >= MaxGiveUpWrites {
			break
		}
		var a statev1.Alert
		if err := getProto(txn, alertKey(id), &a); err != nil {
			return n, err
		}
		left := 0
		for _, d := range a.GetDeliveries() {
			if open(d) && match(d.GetChannelRef()) {
				key := alertDueKey(d.GetNextTryUnixMs(), id, d.GetChannelRef())
				if err := txn.Delete(key); err != nil {
					return n, err
				}
				write(key, 0)
				d.GivenUp, d.LastError = true, reason
				n++
			}
			if open(d) {
				left++
			}
		}
		if err := setProto(txn, alertKey(id), &a); err != nil {
			return n, err
		}
		write(alertKey(id), proto.Size(&a))
		if left == 0 {
			write(alertPendingKey(id), 0)
			write(alertDoneKey(ctx.now, id), 0)
			if err := txn.Delete(alertPendingKey(id)); err != nil {
				return n, err
			}
			if err := txn.Set(alertDoneKey(ctx.now, id), nil); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}
