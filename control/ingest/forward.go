package ingest

import (
	"context"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingwire"
)

// Events that agents forward (control/agentrpc) take the same path into
// raft as pings: they are checked against the same rules and go through
// the same Batcher.

// CheckForwarded checks an event an agent received and buffered against
// the Ingest API's rules, with the rules of a ping (pingwire.CheckFields), and cuts its message
// to 64 KiB. Its received_unix_ms is the agent's receipt time, kept: it
// may be at most 5 minutes ahead of now, and no older than the event
// retention age (an older event would be pruned at once); its timestamp at
// most 5 minutes ahead of its receipt, and no older than the retention
// age either. The account, key and event ids are the caller's to check.
func (a *API) CheckForwarded(ev *raftv1.Event, now time.Time) error {
	if err := pingwire.CheckFields(ev); err != nil {
		return err
	}
	received := time.UnixMilli(ev.GetReceivedUnixMs())
	switch {
	case ev.GetReceivedUnixMs() <= 0:
		return pingwire.MissingField("received_unix_ms")
	case received.After(now.Add(pingwire.MaxTimestampSkew)):
		return pingwire.InvalidFieldWhy("received_unix_ms", "more than 5 minutes in the future")
	case a.retention > 0 && received.Before(now.Add(-a.retention)):
		return pingwire.InvalidFieldWhy("received_unix_ms", "older than the event retention age ("+a.retention.String()+")")
	}
	if ev.Timestamp != nil {
		if ev.GetTimestamp() <= 0 || ev.GetTimestamp() > pingwire.MaxUnixTimestamp {
			return pingwire.InvalidField("timestamp")
		}
		at := time.UnixMilli(ev.GetTimestamp() * 1000)
		if at.After(received.Add(pingwire.MaxTimestampSkew)) {
			return pingwire.InvalidFieldWhy("timestamp", "more than 5 minutes after its receipt")
		}
		if a.retention > 0 && at.Before(now.Add(-a.retention)) {
			return pingwire.InvalidFieldWhy("timestamp", "older than the event retention age ("+a.retention.String()+")")
		}
	}
	return nil
}

// SubmitGroup submits events through the API's Batcher, together and in
// order (Batcher.SubmitGroup).
func (a *API) SubmitGroup(ctx context.Context, evs []*raftv1.Event) ([]*raftv1.EventResult, error) {
	return a.batcher.SubmitGroup(ctx, evs)
}

// MaxGroup is the Batcher's bound of one group (Batcher.MaxGroup).
func (a *API) MaxGroup() (events, bytes int) { return a.batcher.MaxGroup() }
