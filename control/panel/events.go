package panel

import (
	"fmt"

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
	TCP                                       *raftv1.ExecutionTCP
	DNS                                       *raftv1.ExecutionDNS
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
		Error: e.GetError(), Attempts: e.GetAttempts(), HTTP: e.GetHttp(), SSL: e.GetSsl(), TCP: e.GetTcp(), DNS: e.GetDns()}
}

// chart is the bar chart of the durations of the last runs, drawn as an
// inline SVG by the template: oldest on the left.
type chart struct {
	Bars []bar
	// Max is the tallest duration, in seconds, as a label.
	Max string
}

type bar struct {
	X, Y, W, H float64
	Color      string
	Title      string
}

// chartRuns is how many runs the chart shows; chart width and height are
// the SVG's viewBox.
const (
	chartRuns   = 50
	chartWidth  = 600.0
	chartHeight = 120.0
)

type point struct {
	seconds float64
	color   string
	title   string
}

// eventChart charts the events that carry a duration (newest first in).
func eventChart(events []*statev1.StoredEvent) chart {
	var pts []point
	for _, e := range events {
		if e.Duration == nil || len(pts) == chartRuns {
			continue
		}
		ev := e.GetEvent()
		label := ev.GetStatus()
		if ev.GetEventType() == "stream_event" {
			label = ev.GetState()
		}
		pts = append(pts, point{e.GetDuration(), e.GetColor(), fmt.Sprintf("%s %s: %s", clockMs(e.GetEventTimeUnixMs()), label, seconds(e.GetDuration()))})
	}
	return draw(pts)
}

// execChart charts the finished executions' durations (newest first in).
func execChart(execs []*raftv1.Execution) chart {
	var pts []point
	for _, e := range execs {
		if e.GetFinishedUnixMs() == 0 || len(pts) == chartRuns {
			continue
		}
		s := float64(e.GetDurationMs()) / 1000
		pts = append(pts, point{s, execColors[e.GetStatus()], fmt.Sprintf("%s %s: %s", clockMs(e.GetSlotUnixMs()), e.GetStatus(), seconds(s))})
	}
	return draw(pts)
}

func draw(pts []point) chart {
	if len(pts) == 0 {
		return chart{}
	}
	top := 0.0
	for _, p := range pts {
		top = max(top, p.seconds)
	}
	if top <= 0 {
		top = 1
	}
	slot := chartWidth / chartRuns
	c := chart{Max: seconds(top)}
	for i, p := range pts {
		// pts is newest first: the newest bar is on the right.
		x := chartWidth - float64(i+1)*slot
		h := max(2, p.seconds/top*(chartHeight-4))
		color := p.color
		if color == "" {
			color = "gray"
		}
		c.Bars = append(c.Bars, bar{X: x + 1, Y: chartHeight - h, W: slot - 2, H: h, Color: color, Title: p.title})
	}
	return c
}
