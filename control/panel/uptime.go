package panel

import (
	"fmt"
	"strings"

	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// uptimeFigures are a monitor's uptime over the last 24 hours, 7 days and
// 30 days (state.UptimeOver): "99.95%", or "–" when none of the window
// counted (new, paused, or not yet that old and never up or down).
type uptimeFigures struct {
	Day, Week, Month string
}

// uptimeWindows are the windows the panel shows, in milliseconds.
var uptimeWindows = [3]int64{24 * 3600 * 1000, 7 * 24 * 3600 * 1000, 30 * 24 * 3600 * 1000}

// figures computes u's uptime as of nowMs, not counting from unknownSince
// on (0: it is not unknown).
func figures(u *statev1.Uptime, nowMs, unknownSince int64) uptimeFigures {
	var out [3]string
	for i, w := range uptimeWindows {
		out[i] = uptimePercent(state.UptimeOver(u, nowMs-w, nowMs, nowMs, unknownSince))
	}
	return uptimeFigures{Day: out[0], Week: out[1], Month: out[2]}
}

// uptimePercent is r as "100%", "99.5%", "99.95%": two decimals at most,
// never 100% while anything was down; "–" when nothing counted.
func uptimePercent(r state.UptimeRatio) string {
	if !r.Known() {
		return "–"
	}
	p := r.Percent()
	if r.DownMs > 0 && p > 99.99 {
		p = 99.99
	}
	s := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", p), "0"), ".")
	return s + "%"
}

// fillUptimes sets the uptime figures of the rows shown, in one read of
// their records.
func (p *Panel) fillUptimes(rows []monitorRow, nowMs int64) error {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.UUID
	}
	us, err := p.o.State.Uptimes(ids)
	if err != nil {
		return err
	}
	for i := range rows {
		var unknown int64
		if rows[i].State == stateUnknown {
			if unknown, err = p.unknownSince(rows[i].UUID); err != nil {
				return err
			}
		}
		rows[i].Uptime = figures(us[rows[i].UUID], nowMs, unknown)
	}
	return nil
}

// unknownSince is when the monitor became unknown (its agent region went
// offline).
func (p *Panel) unknownSince(id string) (int64, error) {
	m, err := p.o.State.MonitorByUUID(id)
	if err != nil {
		return 0, err
	}
	return p.o.State.UnknownSince(m)
}
