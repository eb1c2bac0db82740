package pingwire

import (
	"math"
	"unicode/utf8"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// CheckFields checks the fields of an event that was parsed elsewhere (an
// event an agent accepted, buffered and forwarded) against the rules
// ParseJSON and ParseQuery apply to a ping, and cuts its message to
// MaxMessageBytes. Times and ids are the caller's to check.
func CheckFields(ev *raftv1.Event) error {
	switch {
	case ev.GetEventType() == "":
		return MissingField("event_type")
	case utf8.RuneCountInString(ev.GetEventType()) > MaxEventType:
		return InvalidField("event_type")
	case ev.GetMonitor() == "":
		return MissingField("monitor")
	case utf8.RuneCountInString(ev.GetMonitor()) > MaxMonitor || !validMonitor(ev.GetMonitor()):
		return InvalidField("monitor")
	}
	switch ev.GetStatus() {
	case "run", "complete", "fail", "skip":
	case "":
		if ev.GetEventType() == eventTypePing {
			return MissingField("status")
		}
	default:
		return InvalidField("status")
	}
	if ev.GetState() == "" && ev.GetEventType() == eventTypeStream {
		return MissingField("state")
	}
	if ev.Duration != nil {
		d := ev.GetDuration()
		if math.IsNaN(d) || math.IsInf(d, 0) || d < 0 {
			return InvalidField("duration")
		}
	}
	switch {
	case utf8.RuneCountInString(ev.GetHost()) > MaxHost:
		return InvalidField("host")
	case utf8.RuneCountInString(ev.GetProject()) > MaxProject:
		return InvalidField("project")
	case utf8.RuneCountInString(ev.GetSeries()) > MaxSeries:
		return InvalidField("series")
	case utf8.RuneCountInString(ev.GetEventId()) > MaxEventID:
		return InvalidField("event_id")
	}
	if err := checkProject(ev.GetProject()); err != nil {
		return err
	}
	ev.Message = CutUTF8(ev.GetMessage(), MaxMessageBytes)
	return nil
}
