package panel

import (
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// eventRow is one event of a monitor's log. Color is the stored display
// class (api.md 3.1 for pings, 3.2 for stream events).
type eventRow struct {
	Seq      uint64
	TimeMs   int64
	Type     string
	Label    string
	Color    string
	Duration *float64
	ExitCode *int64
	Host     string
	Message  string
	Series   string
}

func toEventRow(e *statev1.StoredEvent) eventRow {
	ev := e.GetEvent()
	row := eventRow{Seq: e.GetSeq(), TimeMs: e.GetEventTimeUnixMs(), Type: ev.GetEventType(), Color: e.GetColor(),
		Host: ev.GetHost(), Message: ev.GetMessage(), Series: ev.GetSeries(), ExitCode: ev.ExitCode, Duration: e.Duration}
	row.Label = ev.GetStatus()
	if row.Type == "stream_event" {
		row.Label = ev.GetState()
	}
	if row.Color == "" {
		row.Color = "gray"
	}
	return row
}

// execRow is one execution of a check, with its timings.
type execRow struct {
	SlotMs, StartedMs, FinishedMs, DurationMs int64
	Status, Color, Region, Agent, Error       string
	AgentID                                   string
	Attempts                                  int64
	HTTP                                      *raftv1.ExecutionHTTP
	SSL                                       *raftv1.ExecutionSSL
}

// execColors are the display classes of execution statuses (api.md 3.3).
var execColors = map[string]string{"success": "green", "failed": "red", "running": "blue", "retrying": "amber", "pending": "gray"}

func toExecRow(e *raftv1.Execution) execRow {
	c := execColors[e.GetStatus()]
	if c == "" {
		c = "gray"
	}
	return execRow{SlotMs: e.GetSlotUnixMs(), StartedMs: e.GetStartedUnixMs(), FinishedMs: e.GetFinishedUnixMs(),
		DurationMs: e.GetDurationMs(), Status: e.GetStatus(), Color: c, Region: e.GetRegion(), Agent: e.GetAgent(), AgentID: e.GetAgentId(),
		Error: e.GetError(), Attempts: e.GetAttempts(), HTTP: e.GetHttp(), SSL: e.GetSsl()}
}
