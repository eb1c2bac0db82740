package state

import (
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// store appends ev to the monitor's history: the next seq, the event time
// (the sender's timestamp, else the receipt time), the colour, the runs it
// opens or closes, and the monitor's ping state.
//
// Runs: a ping run opens a run; complete and fail close the run of their
// series, or without series the newest open run of any series, unless it
// started more than 72 h before the event. When the event has no duration,
// the paired run gives it one (never negative). skip, stream events and
// custom events neither open nor close runs.
func (in *ingest) store(pos int, m *monState, ev *raftv1.Event) error {
	p := m.ping()
	seq := p.NextSeq
	p.NextSeq++
	received := ev.GetReceivedUnixMs()
	at := received
	if ev.Timestamp != nil {
		at = ev.GetTimestamp() * 1000
	}
	se := &statev1.StoredEvent{Seq: seq, Event: ev, EventTimeUnixMs: at, Duration: ev.Duration, Color: eventColor(ev)}
	if ev.GetEventType() == "ping" {
		switch ev.GetStatus() {
		case "run":
			if err := in.mons.loadRuns(m); err != nil {
				return err
			}
			m.runs, m.runsDirty = openRun(m.runs, ev.GetSeries(), at, seq), true
		case "complete", "fail":
			if err := in.mons.loadRuns(m); err != nil {
				return err
			}
			rest, start, paired, changed := closeRun(m.runs, ev.GetSeries(), at)
			m.runs, m.runsDirty = rest, m.runsDirty || changed
			if paired && se.Duration == nil {
				d := float64(max(at-start, 0)) / 1000
				se.Duration = &d
			}
		}
	}
	id := m.mon.GetUuid()
	key := eventKey(id, seq)
	if err := setProto(in.txn, key, se); err != nil {
		return err
	}
	in.ctx.values.eventStored(in.txn, key)
	if err := fileEvent(in.txn, p, id, seq, received); err != nil {
		return err
	}
	p.Events++
	if at >= p.LastPingUnixMs {
		p.LastPingUnixMs, p.LastStatus, p.LastRegion = at, lastStatus(ev), ev.GetRegion()
	}
	m.dirty = true
	// The monitor's state machine: a ping may raise an alert, and change
	// what the monitor's time counts as in its uptime.
	before := UptimeStateOf(m.mon, "")
	if _, err := onPing(in.txn, in.ctx, pos, m.mon, se); err != nil {
		return err
	}
	if st := UptimeStateOf(m.mon, ""); st != before {
		return in.mons.flipUptime(m, st, at, in.ctx.now)
	}
	return nil
}

// lastStatus is what PingState.last_status records for ev: the status of a
// ping, the state of a stream event, the type of a custom event.
func lastStatus(ev *raftv1.Event) string {
	switch ev.GetEventType() {
	case "ping":
		return ev.GetStatus()
	case "stream_event":
		return ev.GetState()
	}
	return ev.GetEventType()
}

// trim deletes the monitor's oldest events while it keeps more than
// retention_count, probing seqs upward from its retention start (events_low),
// with point reads: no iterator on the ingest path. Age pruning deletes
// from the retention start up and moves it (prune.go), so there are no
// holes. The probes of one batch are bounded (in.trims).
func (in *ingest) trim(m *monState) error {
	if in.keep <= 0 {
		return nil
	}
	p := m.ping()
	for p.Events > in.keep && in.trims > 0 {
		in.mons.loadLow(m)
		if m.low >= p.NextSeq {
			return nil
		}
		in.trims--
		found, err := deleteEventAt(in.txn, in.ctx.values, m.mon.GetUuid(), m.low)
		if err != nil {
			return err
		}
		m.low++
		m.lowModified = true
		if found {
			p.Events--
		}
	}
	return nil
}
