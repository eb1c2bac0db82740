package state

import (
	"errors"
	"strconv"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

// alertNamespace is the UUID namespace of alert ids, derived by the state
// machine (which draws no random numbers) from the raft entry.
var alertNamespace = uuid.MustParse("3e8a6f0e-5a43-4f0b-9a53-2f4d2c7c9b1e")

func alertKey(id string) []byte        { return k(prefixAlert, id) }
func alertPendingKey(id string) []byte { return k(prefixAlertPending, id) }

// newAlert is an alert of monitor m, not stored yet (storeAlert puts it in
// the outbox), with one delivery per channel it is routed to: the channels
// of the monitor's notification group, or else the account's default
// channels. Its id is derived from the entry (index) and the alert's
// position in it, so it is the same on every node and never reused. The
// alert carries the ping event ev or the check execution exec that raised
// it, and for a check with regions the regions that saw it fail.
func newAlert(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor, typ string, at int64, ev *statev1.StoredEvent, exec *raftv1.Execution, regions ...string) (*statev1.Alert, error) {
	id := uuid.NewSHA1(alertNamespace, []byte(m.GetUuid()+"\x00"+strconv.FormatUint(ctx.index, 10)+"\x00"+strconv.Itoa(pos)+"\x00"+typ)).String()
	deliveries, err := route(txn, ctx.values, m)
	if err != nil {
		return nil, err
	}
	a := &statev1.Alert{Id: id, AccountId: m.GetAccountId(), MonitorUuid: m.GetUuid(), Type: typ, OccurredUnixMs: at, Event: ev, Execution: exec, Deliveries: deliveries, Regions: regions}
	if m.GetKind() == KindPing {
		a.LastPingUnixMs = PingState(m).LastPingMs
		if typ == pingstate.AlertMissed {
			// The deadline is the expected time plus the grace.
			a.ExpectedUnixMs = at - m.GetGraceSeconds()*1000
		} else if a.LastPingUnixMs > 0 {
			// The next run after the newest ping (by the schedule or the
			// interval; 0 when none is expected).
			a.ExpectedUnixMs = PingSettings(m).ExpectedAfter(a.LastPingUnixMs)
		}
	}
	if a.ProblemSinceUnixMs, a.ProblemType, err = trackProblem(txn, m.GetUuid(), typ, at); err != nil {
		return nil, err
	}
	return a, nil
}

func alertSinceKey(monitorUUID string) []byte { return k(prefixAlertSince, monitorUUID) }

// trackProblem keeps the first alert of a monitor's problem until a
// recovery ends it: an alert of type typ at time at begins a problem
// unless one is open; a recovery ends it and gets when it began and what
// began it (0 and "" when none was open).
func trackProblem(txn *badger.Txn, monitorUUID, typ string, at int64) (int64, string, error) {
	key := alertSinceKey(monitorUUID)
	var open statev1.OpenProblem
	err := getProto(txn, key, &open)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return 0, "", err
	}
	if typ == pingstate.AlertRecovered || typ == AlertCheckRecovered {
		if err != nil {
			return 0, "", nil
		}
		return open.GetSinceUnixMs(), open.GetType(), txn.Delete(key)
	}
	if err == nil {
		return 0, "", nil // a problem is open: it began earlier
	}
	return 0, "", setProto(txn, key, &statev1.OpenProblem{SinceUnixMs: at, Type: typ})
}

// storeAlert puts alert a, with its deliveries due now, in the outbox.
func storeAlert(txn *badger.Txn, ctx applyCtx, a *statev1.Alert) error {
	id, deliveries := a.GetId(), a.GetDeliveries()
	for _, d := range deliveries {
		d.NextTryUnixMs = ctx.now
	}
	if err := setProto(txn, alertKey(id), a); err != nil {
		return err
	}
	if ctx.raised != nil {
		*ctx.raised = true
	}
	if len(deliveries) == 0 {
		// Nothing to send: finished as it is raised.
		return txn.Set(alertDoneKey(ctx.now, id), nil)
	}
	for _, d := range deliveries {
		if err := setDueKey(txn, ctx, alertDueKey(d.GetNextTryUnixMs(), id, d.GetChannelRef()), a.GetAccountId()); err != nil {
			return err
		}
	}
	return txn.Set(alertPendingKey(id), nil)
}

// route lists the deliveries of an alert of m: the channels of its
// notification group (a group's channel that names an alert channel of
// the account by channel_id is delivered as that channel, once), or else
// the account's default channels.
func route(txn *badger.Txn, values *valueCache, m *statev1.Monitor) ([]*statev1.Delivery, error) {
	acct := m.GetAccountId()
	if g := m.GetNotificationGroup(); g != "" {
		gid, err := getRaw(txn, k(prefixGroupName, acct, g))
		if errors.Is(err, ErrNotFound) {
			return nil, nil // the group is gone: nowhere to send
		}
		if err != nil {
			return nil, err
		}
		var group statev1.NotificationGroup
		if err := getProto(txn, k(prefixGroup, acct, string(gid)), &group); err != nil {
			return nil, err
		}
		// Channels it cannot read (empty, not an array of channel
		// objects) are no channels, the same on every node, rather than
		// an error that would stop every node at every replay of the
		// entry. CreateNotificationGroup and updates check them, so this
		// is a safety net, not a path current data takes.
		channels, err := parseGroupChannels(group.GetChannelsJson())
		if err != nil {
			channels = nil
		}
		out := make([]*statev1.Delivery, 0, len(channels))
		seen := map[string]bool{}
		for i, c := range channels {
			if c.ChannelID == "" {
				out = append(out, &statev1.Delivery{ChannelRef: groupRef(group.GetId(), i, c.raw), ChannelType: c.Type})
				continue
			}
			var ch statev1.Channel
			err := getProto(txn, channelKey(acct, c.ChannelID), &ch)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if ref := "chan:" + ch.GetId(); !seen[ref] {
				seen[ref] = true
				out = append(out, &statev1.Delivery{ChannelRef: ref, ChannelType: ch.GetType()})
			}
		}
		return out, nil
	}
	channels, err := defaultChannels(txn, values, acct)
	if err != nil {
		return nil, err
	}
	var out []*statev1.Delivery
	for _, c := range channels {
		out = append(out, &statev1.Delivery{ChannelRef: c.ref, ChannelType: c.typ})
	}
	return out, nil
}

// MaxRecordDeliveries bounds the records of one RecordDeliveries: each
// rewrites one alert, as each alert of a JudgeAfresh is written.
const MaxRecordDeliveries = 16

// applyRecordDeliveries applies records in order, each as
// applyRecordDelivery would alone (applyEach).
func applyRecordDeliveries(txn *badger.Txn, ctx applyCtx, c *raftv1.RecordDeliveries) (*raftv1.Result, error) {
	return applyEach(txn, ctx, "record deliveries", c.GetRecords(), MaxRecordDeliveries, applyRecordDelivery)
}

// applyRecordDelivery records one delivery attempt and moves the
// delivery in the due index (out of it when it is delivered or given up).
// When every delivery of the alert is delivered or given up, the alert
// leaves the pending set and is finished at the command's time (the
// alert-done: index PruneAlerts sweeps).
func applyRecordDelivery(txn *badger.Txn, ctx applyCtx, c *raftv1.RecordDelivery) (*raftv1.Result, error) {
	var a statev1.Alert
	err := getProto(txn, alertKey(c.GetAlertId()), &a)
	if errors.Is(err, ErrNotFound) {
		return notFound("alert %s not found", c.GetAlertId()), nil
	}
	if err != nil {
		return nil, err
	}
	left := 0
	var rec *statev1.Delivery
	for _, d := range a.GetDeliveries() {
		if d.GetChannelRef() == c.GetChannelRef() && open(d) {
			if err := txn.Delete(alertDueKey(d.GetNextTryUnixMs(), a.GetId(), d.GetChannelRef())); err != nil {
				return nil, err
			}
			rec = d
			d.Attempts++
			d.LastError = c.GetError()
			d.Delivered = c.GetDelivered()
			d.GivenUp = !c.GetDelivered() && c.GetGiveUp()
			d.NextTryUnixMs = c.GetNextTryUnixMs()
		}
		if open(d) {
			left++
		}
	}
	if rec == nil {
		return ok(), nil // already recorded (a retried command, a second dispatcher)
	}
	if err := setProto(txn, alertKey(a.GetId()), &a); err != nil {
		return nil, err
	}
	if err := recordHistory(txn, ctx, &a, rec, c.GetPermanent()); err != nil {
		return nil, err
	}
	if open(rec) {
		return ok(), setDueKey(txn, ctx, alertDueKey(rec.GetNextTryUnixMs(), a.GetId(), rec.GetChannelRef()), a.GetAccountId())
	}
	if left == 0 {
		if err := txn.Delete(alertPendingKey(a.GetId())); err != nil {
			return nil, err
		}
		return ok(), txn.Set(alertDoneKey(ctx.now, a.GetId()), nil)
	}
	return ok(), nil
}

// PendingAlerts returns the alerts with deliveries left, oldest id first
// (at most limit; 0 for all).
func (s *Store) PendingAlerts(limit int) ([]*statev1.Alert, error) {
	var out []*statev1.Alert
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixAlertPending})
		defer it.Close()
		for it.Rewind(); it.Valid() && (limit <= 0 || len(out) < limit); it.Next() {
			id := string(it.Item().Key()[len(prefixAlertPending):])
			s.outboxReads.Add(2)
			a := new(statev1.Alert)
			if err := getProto(txn, alertKey(id), a); err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	return out, err
}

// Alert returns one alert.
func (s *Store) Alert(id string) (*statev1.Alert, error) {
	var a statev1.Alert
	s.outboxReads.Add(1)
	if err := s.view(func(txn *badger.Txn) error { return getProto(txn, alertKey(id), &a) }); err != nil {
		return nil, err
	}
	return &a, nil
}
