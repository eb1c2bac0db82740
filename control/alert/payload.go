package alert

import (
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"lookout/control/alert/channel"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// payload is what the channels get for a: the monitor as it is now (or,
// when it is gone, what the alert and its event tell of it), the event
// behind the alert, and the link to the monitor in the panel.
func (d *Dispatcher) payload(a *statev1.Alert) channel.Alert {
	if a.GetRegion() != "" {
		return d.regionPayload(a)
	}
	out := channel.Alert{
		ID:         a.GetId(),
		Type:       a.GetType(),
		OccurredAt: time.UnixMilli(a.GetOccurredUnixMs()).UTC(),
		AccountID:  a.GetAccountId(),
		Monitor:    channel.Monitor{UUID: a.GetMonitorUuid()},
		Regions:    a.GetRegions(),
	}
	quietFields(&out, a)
	m, err := d.o.State.MonitorByUUID(a.GetMonitorUuid())
	switch {
	case err == nil:
		out.Monitor = monitorOf(m)
	case !errors.Is(err, state.ErrNotFound):
		d.o.Logger.Warn("reading the alert's monitor failed; sending without it", "alert", a.GetId(), "error", err)
	}
	if se := a.GetEvent(); se != nil {
		out.Event = event(se)
		if out.Monitor.Name == "" {
			out.Monitor.Name, out.Monitor.Project = se.GetEvent().GetMonitor(), se.GetEvent().GetProject()
		}
	}
	if x := a.GetExecution(); x != nil {
		out.Event = executionEvent(x)
	}
	if d.o.PanelURL != "" {
		out.PanelURL = strings.TrimRight(d.o.PanelURL, "/") + "/monitors/" + a.GetMonitorUuid()
	}
	out.ExpectedAt, out.LastPingAt = msTime(a.GetExpectedUnixMs()), msTime(a.GetLastPingUnixMs())
	out.ProblemSince, out.ProblemType = msTime(a.GetProblemSinceUnixMs()), a.GetProblemType()
	return out
}

// monitorOf is m as channels show it, with what its alerts' summaries
// compare with: a ping monitor's interval (or schedule) and timeout, an
// http_check's expected status, an ssl_check's domain.
func monitorOf(m *statev1.Monitor) channel.Monitor {
	out := channel.Monitor{
		UUID: m.GetUuid(), Kind: m.GetKind(), Name: m.GetName(), DisplayName: m.GetDisplayName(),
		Project: m.GetProject(), Tags: m.GetTags(),
	}
	switch m.GetKind() {
	case state.KindPing:
		out.TimeoutSeconds = m.GetTimeoutSeconds()
		// A schedule (in its zone) replaces the interval.
		if out.Schedule = m.GetSchedule(); out.Schedule == "" {
			out.ExpectedIntervalSeconds = m.GetExpectedIntervalSeconds()
		} else {
			out.Timezone = m.GetTimezone()
		}
	case state.KindHTTPCheck:
		out.ExpectedStatus = m.GetConfig().GetExpectedStatus()
	case state.KindSSLCheck:
		out.Domain = m.GetConfig().GetDomain()
	}
	return out
}

// msTime is Unix ms as a UTC time; 0 is the zero time.
func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// event is the stored event as channels show it.
func event(se *statev1.StoredEvent) *channel.Event {
	ev := se.GetEvent()
	e := &channel.Event{
		EventType:  ev.GetEventType(),
		Status:     ev.GetStatus(),
		State:      ev.GetState(),
		Host:       ev.GetHost(),
		Message:    ev.GetMessage(),
		Series:     ev.GetSeries(),
		Timestamp:  time.UnixMilli(se.GetEventTimeUnixMs()).UTC(),
		ReceivedAt: time.UnixMilli(ev.GetReceivedUnixMs()).UTC(),
	}
	if se.Duration != nil {
		v := se.GetDuration()
		e.Duration = &v
	}
	if ev.ExitCode != nil {
		v := ev.GetExitCode()
		e.ExitCode = &v
	}
	return e
}

// executionEvent is a check execution as channels show it.
func executionEvent(x *raftv1.Execution) *channel.Event {
	ms := func(v int64) time.Time { return time.UnixMilli(v).UTC() }
	e := &channel.Execution{
		ID: state.ExecutionID(x.GetCheckUuid(), x.GetRegion(), x.GetSlotUnixMs()), Region: x.GetRegion(), Agent: x.GetAgent(),
		Slot: ms(x.GetSlotUnixMs()), Attempts: x.GetAttempts(), StartedAt: ms(x.GetStartedUnixMs()), FinishedAt: ms(x.GetFinishedUnixMs()),
		DurationMs: x.GetDurationMs(), Error: x.GetError(),
	}
	if h := x.GetHttp(); h != nil {
		e.HTTP = &channel.ExecutionHTTP{StatusCode: h.GetStatusCode(), ResponseBytes: h.GetResponseBytes(), TimingsMs: map[string]int64{
			"dns": h.GetDnsMs(), "connect": h.GetConnectMs(), "tls": h.GetTlsMs(), "ttfb": h.GetTtfbMs(), "total": h.GetTotalMs(),
		}}
	}
	if s := x.GetSsl(); s != nil {
		e.SSL = &channel.ExecutionSSL{
			ExpiresAt: ms(s.GetExpiresUnixMs()), DaysLeft: s.GetDaysLeft(), Issuer: s.GetIssuer(), Subject: s.GetSubject(),
			DNSNames: append([]string{}, s.GetDnsNames()...), ChainValid: s.GetChainValid(), HostnameValid: s.GetHostnameValid(),
		}
	}
	if c := x.GetTcp(); c != nil {
		e.TCP = &channel.ExecutionTCP{ConnectMs: c.GetConnectMs()}
	}
	if n := x.GetDns(); n != nil {
		e.DNS = &channel.ExecutionDNS{Answers: append([]string{}, n.GetAnswers()...), RTTMs: n.GetRttMs()}
	}
	return &channel.Event{
		EventType: "execution", Status: x.GetStatus(), Message: x.GetError(),
		Timestamp: ms(x.GetFinishedUnixMs()), ReceivedAt: ms(x.GetFinishedUnixMs()), Execution: e,
	}
}

// regionNamespace is the UUID namespace of the stand-in monitor uuid of an
// account's agent region.
var regionNamespace = uuid.MustParse("8d0f2c4e-3b7a-4e51-9c2d-6a1f0e9b7d35")

// regionPayload is an agent.offline or agent.online alert: about an agent
// region of the account, not one monitor.
func (d *Dispatcher) regionPayload(a *statev1.Alert) channel.Alert {
	out := channel.Alert{
		ID: a.GetId(), Type: a.GetType(), OccurredAt: time.UnixMilli(a.GetOccurredUnixMs()).UTC(), AccountID: a.GetAccountId(),
		Monitor: channel.Monitor{
			UUID: uuid.NewSHA1(regionNamespace, []byte(a.GetAccountId()+"\x00"+a.GetRegion())).String(),
			Kind: "region", Name: a.GetRegion(),
		},
		Region: &channel.Region{Name: a.GetRegion(), Monitors: a.GetRegionMonitors()},
	}
	if d.o.PanelURL != "" {
		out.PanelURL = strings.TrimRight(d.o.PanelURL, "/") + "/"
	}
	return out
}

// quietFields adds what the alert rules tell (decisions.md 12): the
// failure alert a reminder recalls, when the monitor went down, how long
// it was down.
func quietFields(out *channel.Alert, a *statev1.Alert) {
	out.OriginalAlertID = a.GetOriginalAlertId()
	if ms := a.GetDownSinceUnixMs(); ms > 0 {
		t := time.UnixMilli(ms).UTC()
		out.DownSince = &t
	}
	if a.DownSeconds != nil {
		d := a.GetDownSeconds()
		out.DownSeconds = &d
	}
}
