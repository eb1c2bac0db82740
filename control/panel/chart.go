package panel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// The charts of a monitor's page: a bar per run (a ping monitor's runs'
// durations, a check's response times), oldest on the left, drawn by the
// template as an inline SVG with a y axis in a unit chosen by the range
// (ms, s, min or h) and the runs' times on the x axis. The bars are drawn
// in a plot of chartWidth by chartHeight units stretched to the page's
// width; the labels are outside it, so they are not stretched.

// chart is what the template draws.
type chart struct {
	Bars []bar
	// Ticks are the y axis's gridlines, from 0 up.
	Ticks []tick
	// Times label the x axis: the oldest run's time, the newest's.
	Times []timeLabel
	// Unit is the y axis's unit; Max the tallest value, with its unit
	// ("" when no run has a time).
	Unit, Max string
	// What the bars are ("Run durations", "Response times"), for the
	// axis's title and the image's label.
	What string
	// Failures counts the runs that failed without a time (a refused
	// connection); they are marks at the foot of the plot.
	Failures int
}

// bar is one run: a bar in the plot's units.
type bar struct {
	X, Y, W, H float64
	Color      string
	Title      string
}

// tick is one gridline of the y axis: Y in the plot's units, the label
// placed above it.
type tick struct {
	Y     float64
	Label string
}

// timeLabel is a time on the x axis, at X percent of the width.
type timeLabel struct {
	X      float64
	Anchor string
	Text   string
}

// chartRuns is how many runs the chart shows at most; chartWidth and
// chartHeight are the plot's viewBox.
const (
	chartRuns   = 50
	chartWidth  = 600.0
	chartHeight = 140.0
	// failMark is the height of a run without a time.
	failMark = 6.0
)

// point is one run to chart: its value in milliseconds, or timed false
// for a run that has none.
type point struct {
	ms    float64
	timed bool
	atMs  int64
	color string
	label string
}

// eventChart charts the events that carry a duration (newest first in).
func eventChart(events []*statev1.StoredEvent) chart {
	var pts []point
	for _, e := range events {
		if e.Duration == nil || len(pts) == chartRuns {
			continue
		}
		label, _ := eventLabel(e.GetEvent())
		pts = append(pts, point{ms: e.GetDuration() * 1000, timed: true, atMs: e.GetEventTimeUnixMs(), color: e.GetColor(), label: label})
	}
	return draw("Run durations", pts)
}

// execChart charts the finished executions' response times (newest first
// in): an http_check's total time when a response came, else the
// attempt's duration; a failed execution without a response (a refused
// connection, a timeout) has no time.
func execChart(execs []*raftv1.Execution) chart {
	var pts []point
	for _, e := range execs {
		if e.GetFinishedUnixMs() == 0 || len(pts) == chartRuns {
			continue
		}
		pt := point{atMs: e.GetSlotUnixMs(), color: execColors[e.GetStatus()], label: e.GetStatus()}
		switch h := e.GetHttp(); {
		case h != nil && h.GetStatusCode() != 0:
			pt.ms, pt.timed = float64(h.GetTotalMs()), true
		case e.GetStatus() == "success":
			pt.ms, pt.timed = float64(e.GetDurationMs()), true
		}
		if e.GetRegion() != "" {
			pt.label += " · " + e.GetRegion()
		}
		pts = append(pts, pt)
	}
	return draw("Response times", pts)
}

// draw lays out pts (newest first): the newest bar on the right.
func draw(what string, pts []point) chart {
	if len(pts) == 0 {
		return chart{}
	}
	top := 0.0
	for _, p := range pts {
		if p.timed {
			top = max(top, p.ms)
		}
	}
	ax := newAxis(top)
	c := chart{What: what, Unit: ax.unit, Max: ax.format(top)}
	for _, v := range ax.ticks {
		c.Ticks = append(c.Ticks, tick{Y: chartHeight - v/ax.top*chartHeight, Label: ax.format(v)})
	}
	// A slot per run, at least 20 (a few runs are not a few wide bars).
	slot := chartWidth / float64(max(len(pts), 20))
	for i, p := range pts {
		x := chartWidth - float64(i+1)*slot
		b := bar{X: x + 1, W: slot - 2, Color: p.color}
		if b.Color == "" {
			b.Color = "gray"
		}
		when := clockMs(p.atMs)
		if p.timed {
			b.H = max(1.5, p.ms/ax.top*chartHeight)
			b.Title = fmt.Sprintf("%s UTC, %s: %s", when, p.label, msLabel(p.ms))
		} else {
			b.H = failMark
			b.Title = fmt.Sprintf("%s UTC, %s: no response", when, p.label)
			c.Failures++
		}
		b.Y = chartHeight - b.H
		c.Bars = append(c.Bars, b)
	}
	if c.Failures == len(pts) {
		c.Max = ""
	}
	oldest, newest := pts[len(pts)-1], pts[0]
	layout := "15:04"
	if time.UnixMilli(oldest.atMs).UTC().YearDay() != time.UnixMilli(newest.atMs).UTC().YearDay() || newest.atMs-oldest.atMs > 86_400_000 {
		layout = "Jan 2 15:04"
	}
	at := func(ms int64) string { return time.UnixMilli(ms).UTC().Format(layout) }
	c.Times = append(c.Times,
		timeLabel{X: (chartWidth - float64(len(pts))*slot) / chartWidth * 100, Anchor: "start", Text: at(oldest.atMs)},
		timeLabel{X: 100, Anchor: "end", Text: at(newest.atMs)})
	if len(pts) > chartRuns/2 {
		// A middle label where the bars are many enough to leave room.
		mid := pts[len(pts)/2]
		c.Times = append(c.Times, timeLabel{X: (chartWidth - float64(len(pts)/2)*slot - slot/2) / chartWidth * 100, Anchor: "middle", Text: at(mid.atMs)})
	}
	return c
}

// axis is the y axis: its top, gridline values and unit.
type axis struct {
	top   float64   // ms
	ticks []float64 // ms, from 0 to top
	unit  string
	scale float64 // ms per unit
}

// axisUnits are the units of the y axis, the largest that the top reaches
// at least once wins.
var axisUnits = []struct {
	name  string
	scale float64
}{{"h", 3_600_000}, {"min", 60_000}, {"s", 1000}, {"ms", 1}}

// newAxis is a y axis from 0 to top (ms) or a little over, with 2 to 5
// gridlines at round values of its unit. A top of 0 (only instant runs)
// makes an axis to 1 ms.
func newAxis(top float64) axis {
	a := unitFor(top)
	v := top / a.scale
	if v <= 0 {
		v = 1
	}
	step := niceStep(v / 4)
	n := math.Ceil(v/step - 1e-9)
	for i := 0.0; i <= n; i++ {
		a.ticks = append(a.ticks, i*step*a.scale)
	}
	a.top = n * step * a.scale
	return a
}

// niceStep is the round step (1, 2 or 5 times a power of ten) at or above
// rough.
func niceStep(rough float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(rough)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= rough-1e-12 {
			return m * mag
		}
	}
	return 10 * mag
}

// msLabel is ms in the unit that suits it: "4 ms", "1.25 s", "3.5 min".
func msLabel(ms float64) string { return unitFor(ms).format(ms) }

// unitFor is an axis without ticks in the unit that suits ms: the largest
// of which it holds at least 1 (s) or 2 (min, h: 90 s reads better than
// 1.5 min).
func unitFor(ms float64) axis {
	for _, u := range axisUnits {
		least := 2.0
		if u.name == "s" || u.name == "ms" {
			least = 1
		}
		if ms >= u.scale*least {
			return axis{unit: u.name, scale: u.scale}
		}
	}
	return axis{unit: "ms", scale: 1}
}

// format is ms in the axis's unit: "250 ms", "1.5 s", "12 min".
func (a axis) format(ms float64) string {
	v := ms / a.scale
	s := strconv.FormatFloat(v, 'f', decimals(v), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + " " + a.unit
}

// decimals are the digits after the point a value of the axis needs.
func decimals(v float64) int {
	switch {
	case v == 0 || v >= 10:
		return 0
	case v >= 1:
		return 1
	case v >= 0.1:
		return 2
	}
	return 3
}
