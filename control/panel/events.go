package panel

import (
	"strconv"
	"strings"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/probe"
)

// eventRow is one event of a monitor's log. Color is the stored display
// class (a ping's by its status, a stream event's by keyword; red for a
// missed run, gray for custom types).
type eventRow struct {
	Seq    uint64
	TimeMs int64
	Type   string
	// Label is the pill's text (eventLabel); Note a muted word beside
	// it.
	Label, Note string
	Color       string
	Duration    *float64
	ExitCode    *int64
	Host        string
	Message     string
	Series      string
}

func toEventRow(e *statev1.StoredEvent) eventRow {
	ev := e.GetEvent()
	row := eventRow{Seq: e.GetSeq(), TimeMs: e.GetEventTimeUnixMs(), Type: ev.GetEventType(), Color: e.GetColor(),
		Host: ev.GetHost(), Message: ev.GetMessage(), Series: ev.GetSeries(), ExitCode: ev.ExitCode, Duration: e.Duration}
	row.Label, row.Note = eventLabel(ev)
	if row.Color == "" {
		row.Color = "gray"
	}
	return row
}

// eventLabel is what the log says of an event, for each type the state
// records: a ping's status (run, complete, fail, skip); a stream event's
// state, noted "stream"; "missed" for the expected run that did not come
// (the engine's event); a custom type's name, noted with its status or
// state when it has one.
func eventLabel(ev *raftv1.Event) (label, note string) {
	switch t := ev.GetEventType(); t {
	case "ping":
		if ev.GetStatus() == "" {
			return "ping", ""
		}
		return ev.GetStatus(), ""
	case "stream_event":
		if ev.GetState() == "" {
			return "stream event", ""
		}
		return ev.GetState(), "stream"
	case state.EventMissed:
		return "missed", "no ping by the deadline"
	default:
		note = ev.GetStatus()
		if note == "" {
			note = ev.GetState()
		}
		if t == "" {
			t = "event"
		}
		return t, note
	}
}

// execRow is one execution of a check, with its timings.
type execRow struct {
	SlotMs, StartedMs, FinishedMs, DurationMs int64
	Status, Color, Region, Agent, Error       string
	AgentID                                   string
	Attempts                                  int64
	// Timings says how the last attempt went (execTimings).
	Timings string
	SSL     *raftv1.ExecutionSSL
	DNS     *raftv1.ExecutionDNS
}

// execColors are the display classes of execution statuses.
var execColors = map[string]string{"success": "green", "failed": "red", "running": "blue", "retrying": "amber", "pending": "gray"}

func toExecRow(e *raftv1.Execution) execRow {
	c := execColors[e.GetStatus()]
	if c == "" {
		c = "gray"
	}
	return execRow{SlotMs: e.GetSlotUnixMs(), StartedMs: e.GetStartedUnixMs(), FinishedMs: e.GetFinishedUnixMs(),
		DurationMs: e.GetDurationMs(), Status: e.GetStatus(), Color: c, Region: e.GetRegion(), Agent: e.GetAgent(), AgentID: e.GetAgentId(),
		Error: e.GetError(), Attempts: e.GetAttempts(), Timings: execTimings(e), SSL: e.GetSsl(), DNS: e.GetDns()}
}

// execTimings is what the last attempt of an execution took: an answer's
// status and the phases that took time ("200 · dns 4 · connect 11 · tls
// 23 · ttfb 58 · total 103 ms"); for an attempt that got no answer, why
// ("connection refused", "timed out") and the phases that took time
// before it; else the attempt's duration.
func execTimings(e *raftv1.Execution) string {
	h := e.GetHttp()
	var parts []string
	phase := func(name string, ms int64) {
		if ms > 0 {
			parts = append(parts, name+" "+strconv.FormatInt(ms, 10))
		}
	}
	if h != nil && h.GetStatusCode() != 0 {
		parts = append(parts, strconv.FormatInt(h.GetStatusCode(), 10))
		phase("dns", h.GetDnsMs())
		phase("connect", h.GetConnectMs())
		phase("tls", h.GetTlsMs())
		phase("ttfb", h.GetTtfbMs())
		return strings.Join(parts, " · ") + " · total " + strconv.FormatInt(h.GetTotalMs(), 10) + "\u00a0ms"
	}
	if ms := e.GetTcp().GetConnectMs(); ms > 0 {
		return "connect " + strconv.FormatInt(ms, 10) + "\u00a0ms"
	}
	if ms := e.GetDns().GetRttMs(); ms > 0 {
		return "rtt " + strconv.FormatInt(ms, 10) + "\u00a0ms"
	}
	if e.GetError() != "" && e.GetStatus() != "success" {
		parts = append(parts, noAnswer(e))
		if h != nil {
			phase("dns", h.GetDnsMs())
			phase("connect", h.GetConnectMs())
			phase("tls", h.GetTlsMs())
		}
		if len(parts) > 1 {
			parts[len(parts)-1] += "\u00a0ms"
		}
		return strings.Join(parts, " · ")
	}
	if d := e.GetDurationMs(); d > 0 {
		return strconv.FormatInt(d, 10) + "\u00a0ms"
	}
	return ""
}

// noAnswer says in a few words why an attempt failed, from its error's
// kind (internal/probe) and message: a refused connection reads
// "connection refused" (the system's words, the end of the message).
func noAnswer(e *raftv1.Execution) string {
	msg := e.GetError()
	last := msg[strings.LastIndex(msg, ": ")+1:]
	last = strings.TrimSpace(last)
	switch probe.Kind(e.GetErrorKind()) {
	case probe.KindConnect:
		return last
	case probe.KindDNS:
		return "DNS: " + last
	case probe.KindTimeout:
		return "timed out"
	case probe.KindTLSHandshake:
		return "TLS handshake failed"
	case probe.KindTargetNotAllowed:
		return "address not allowed"
	case probe.KindStatus, probe.KindContent:
		return "unexpected answer"
	}
	if strings.HasPrefix(e.GetErrorKind(), "certificate") {
		return "certificate problem"
	}
	return "no answer"
}
