package alert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"lookout/control/alert/channel"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// errRemoved and errChanged are the recorded errors of a delivery whose
// channel is gone, or was changed in its notification group.
var (
	errRemoved = errors.New("channel removed")
	errChanged = errors.New("channel changed in its notification group")
)

// maxErrorLen bounds the error text kept in the replicated state.
const maxErrorLen = 500

// recordTimeout bounds the proposal of a delivery that succeeded after
// leadership was lost (it is forwarded to the new leader).
const recordTimeout = 5 * time.Second

// deliver makes one attempt of delivery dl of alert a, calls sent once
// the attempt needs no slot any more (its send ended, or the channel is
// gone for good), then records its outcome through raft; when the
// channel could not be read now, it returns without either. It returns when this
// process may try the delivery again before the outbox shows the record:
// the zero time, unless the record could not be written.
func (d *Dispatcher) deliver(ctx context.Context, a *statev1.Alert, dl *statev1.Delivery, sent func()) time.Time {
	log := d.o.Logger.With("alert", a.GetId(), "channel", dl.GetChannelRef(), "attempt", dl.GetAttempts()+1)
	typ, ch, err := d.channel(a.GetAccountId(), dl.GetChannelRef())
	if err != nil && !channel.IsPermanent(err) {
		log.Warn("reading the alert channel failed", "error", err)
		return time.Time{}
	}
	if err == nil {
		sctx, cancel := context.WithTimeout(ctx, d.o.SendTimeout)
		err = ch.Send(sctx, d.payload(a))
		cancel()
		if err != nil && ctx.Err() != nil {
			return time.Time{} // leadership lost: the next leader tries again
		}
	}
	sent()
	now := d.o.Now()
	rec := d.outcome(a, dl, err, now)
	rctx := ctx
	if rec.GetDelivered() {
		// Worth recording even when leadership was just lost: it spares
		// the receiver a repeat.
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
	}
	res, aerr := d.records.record(rctx, rec)
	if aerr != nil {
		if ctx.Err() == nil {
			log.Warn("recording the alert delivery failed; it will be tried again", "delivered", rec.GetDelivered(), "error", aerr)
		}
		return now.Add(d.o.Backoff(int(dl.GetAttempts()) + 1))
	}
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		log.Warn("recording the alert delivery refused", "status", res.GetStatus(), "message", res.GetMessage())
		return time.Time{}
	}
	if dl.GetAttempts() == 0 {
		d.o.Metrics.Queued(typ)
	}
	switch {
	case rec.GetDelivered():
		d.o.Metrics.Delivered(typ)
		log.Debug("alert delivered")
	case rec.GetGiveUp():
		d.o.Metrics.Failed(typ, true)
		log.Warn("alert delivery given up", "error", rec.GetError())
	default:
		d.o.Metrics.Failed(typ, false)
		log.Info("alert delivery failed; retrying", "error", rec.GetError(), "next_try", time.UnixMilli(rec.GetNextTryUnixMs()).UTC())
	}
	return time.Time{}
}

// outcome is the record of an attempt that ended with err (nil:
// delivered) at now. A failure is tried again after the backoff, but not
// later than the alert's occurrence plus MaxRetryTime; a permanent error,
// or a failure at or past that time, gives up.
func (d *Dispatcher) outcome(a *statev1.Alert, dl *statev1.Delivery, err error, now time.Time) *raftv1.RecordDelivery {
	rec := &raftv1.RecordDelivery{AlertId: a.GetId(), ChannelRef: dl.GetChannelRef(), Delivered: err == nil}
	if err == nil {
		return rec
	}
	rec.Error = errorText(err)
	deadline := time.UnixMilli(a.GetOccurredUnixMs()).Add(d.o.MaxRetryTime)
	next := now.Add(d.o.Backoff(int(dl.GetAttempts()) + 1))
	if next.After(deadline) {
		next = deadline
	}
	rec.NextTryUnixMs = next.UnixMilli()
	rec.Permanent = channel.IsPermanent(err)
	rec.GiveUp = rec.Permanent || !now.Before(deadline)
	return rec
}

// errorText is err for the record: without the "permanent:" mark (the
// record says it gave up) and bounded.
func errorText(err error) string {
	var p *channel.PermanentError
	if errors.As(err, &p) {
		err = p.Err
	}
	s := err.Error()
	if len(s) > maxErrorLen {
		s = s[:maxErrorLen] + "..."
	}
	return s
}

// channel makes the channel of ref, an alert delivery's channel_ref, in
// the account, and returns its type too (empty when it could not be
// read). A channel that is gone, or whose config cannot be used, is a
// permanent error.
//
// What it made, or found permanently unusable, is kept until the state's
// channels generation moves (chancache.go), so that a burst of alerts to
// one channel reads and parses its config once.
func (d *Dispatcher) channel(accountID, ref string) (string, channel.Channel, error) {
	gen := d.o.State.ChannelsGeneration() // before the reads it vouches for
	if c, ok := d.chans.get(gen, accountID, ref); ok {
		return c.typ, c.ch, c.err
	}
	typ, config, err := d.config(accountID, ref)
	if err != nil {
		if channel.IsPermanent(err) {
			d.chans.put(gen, accountID, ref, madeChannel{err: err})
		}
		return "", nil, err
	}
	ch, err := d.o.Channels.Channel(typ, config)
	if err != nil {
		err = channel.Permanent(fmt.Errorf("%s channel: %w", typ, err))
		d.chans.put(gen, accountID, ref, madeChannel{typ: typ, err: err})
		return typ, nil, err
	}
	d.chans.put(gen, accountID, ref, madeChannel{typ: typ, ch: ch})
	return typ, ch, nil
}

// config returns the type and config of ref: chan:<id> is a channel of
// the account, group:<group id>:<index>:<hash> the index-th channel
// object of a notification group's channels_json, which must still hash
// to hash (else the group changed since the alert was routed, and the
// delivery is given up rather than sent to another channel).
func (d *Dispatcher) config(accountID, ref string) (string, json.RawMessage, error) {
	if id, ok := strings.CutPrefix(ref, "chan:"); ok {
		c, err := d.o.State.Channel(accountID, id)
		if errors.Is(err, state.ErrNotFound) {
			return "", nil, channel.Permanent(errRemoved)
		}
		if err != nil {
			return "", nil, err
		}
		return c.GetType(), c.GetConfigJson(), nil
	}
	rest, ok := strings.CutPrefix(ref, "group:")
	parts := strings.Split(rest, ":")
	if !ok || len(parts) != 3 {
		return "", nil, channel.Permanent(fmt.Errorf("unknown channel reference %q", ref))
	}
	gid := parts[0]
	index, err := strconv.Atoi(parts[1])
	if err != nil {
		return "", nil, channel.Permanent(fmt.Errorf("unknown channel reference %q", ref))
	}
	groups, err := d.o.State.NotificationGroups(accountID)
	if err != nil {
		return "", nil, err
	}
	for _, g := range groups {
		if g.GetId() != gid {
			continue
		}
		var items []json.RawMessage
		if err := json.Unmarshal(g.GetChannelsJson(), &items); err != nil {
			return "", nil, channel.Permanent(fmt.Errorf("notification group %s: channels: %w", gid, err))
		}
		if index < 0 || index >= len(items) {
			break
		}
		if state.GroupChannelHash(items[index]) != parts[2] {
			return "", nil, channel.Permanent(errChanged)
		}
		var ch struct {
			Type   string          `json:"type"`
			Config json.RawMessage `json:"config"`
		}
		if err := json.Unmarshal(items[index], &ch); err != nil {
			return "", nil, channel.Permanent(fmt.Errorf("notification group %s: channels: %w", gid, err))
		}
		return ch.Type, ch.Config, nil
	}
	return "", nil, channel.Permanent(errRemoved)
}
