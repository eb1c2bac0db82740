package ingest

import (
	"context"
	"math"
	"time"
	"unicode/utf8"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// Events that agents forward (control/agentrpc) take the same path into
// raft as pings: they are checked against the same rules and go through
// the same Batcher.

// CheckForwarded checks an event an agent received and buffered against
// the Ingest API's rules, as buildEvent checks a ping, and cuts its message
// to 64 KiB. Its received_unix_ms is the agent's receipt time, kept: it
// may be at most 5 minutes ahead of now, and no older than the event
// retention age (an older event would be pruned at once); its timestamp at
// most 5 minutes ahead of its receipt, and no older than the retention
// age either. The account, key and event ids are the caller's to check.
func (a *API) CheckForwarded(ev *raftv1.Event, now time.Time) error {
	switch {
	case ev.GetEventType() == "":
		return missingField("event_type")
	case utf8.RuneCountInString(ev.GetEventType()) > maxEventType:
		return invalidField("event_type")
	case ev.GetMonitor() == "":
		return missingField("monitor")
	case utf8.RuneCountInString(ev.GetMonitor()) > maxMonitor || !validMonitor(ev.GetMonitor()):
		return invalidField("monitor")
	}
	switch ev.GetStatus() {
	case "run", "complete", "fail", "skip":
	case "":
		if ev.GetEventType() == eventTypePing {
			return missingField("status")
		}
	default:
		return invalidField("status")
	}
	if ev.GetState() == "" && ev.GetEventType() == eventTypeStream {
		return missingField("state")
	}
	if ev.Duration != nil {
		d := ev.GetDuration()
		if math.IsNaN(d) || math.IsInf(d, 0) || d < 0 {
			return invalidField("duration")
		}
	}
	switch {
	case utf8.RuneCountInString(ev.GetHost()) > maxHost:
		return invalidField("host")
	case utf8.RuneCountInString(ev.GetProject()) > maxProject:
		return invalidField("project")
	case utf8.RuneCountInString(ev.GetSeries()) > maxSeries:
		return invalidField("series")
	case utf8.RuneCountInString(ev.GetEventId()) > maxEventID:
		return invalidField("event_id")
	}
	ev.Message = cutUTF8(ev.GetMessage(), maxMessageBytes)
	received := time.UnixMilli(ev.GetReceivedUnixMs())
	switch {
	case ev.GetReceivedUnixMs() <= 0:
		return missingField("received_unix_ms")
	case received.After(now.Add(maxTimestampSkew)):
		return invalidFieldWhy("received_unix_ms", "more than 5 minutes in the future")
	case a.retention > 0 && received.Before(now.Add(-a.retention)):
		return invalidFieldWhy("received_unix_ms", "older than the event retention age ("+a.retention.String()+")")
	}
	if ev.Timestamp != nil {
		if ev.GetTimestamp() <= 0 || ev.GetTimestamp() > maxUnixTimestamp {
			return invalidField("timestamp")
		}
		at := time.UnixMilli(ev.GetTimestamp() * 1000)
		if at.After(received.Add(maxTimestampSkew)) {
			return invalidFieldWhy("timestamp", "more than 5 minutes after its receipt")
		}
		if a.retention > 0 && at.Before(now.Add(-a.retention)) {
			return invalidFieldWhy("timestamp", "older than the event retention age ("+a.retention.String()+")")
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
