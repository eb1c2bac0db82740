package pingwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/names"
)

// The bounds of an event's fields (docs/api.md, Ingest API, "Fields"). Lengths
// count characters, except message, which counts bytes.
const (
	MaxBodyBytes     = 1 << 20
	MaxEventType     = 64
	MaxMonitor       = 64
	MaxHost          = 255
	MaxProject       = 100
	MaxMessageBytes  = 64 << 10
	MaxSeries        = 64
	MaxEventID       = 128
	MaxUnixTimestamp = 253402300799 // 9999-12-31T23:59:59Z
	// MaxTimestampSkew is how far ahead of the receiving node's clock a
	// timestamp may be: a far-future one would move the monitor's deadline
	// out of reach.
	MaxTimestampSkew = 5 * time.Minute
)

// The event types with rules of their own; any other is a custom event.
const (
	eventTypePing   = "ping"
	eventTypeStream = "stream_event"
)

// fields is an event as sent, before validation: a JSON object (POST) or
// query parameters (GET). An absent field, a JSON null and an empty string
// all read as absent.
type fields interface {
	// str returns a string field, "" when absent.
	str(name string) (string, error)
	// number returns the literal of a number field (JSON number grammar)
	// and whether it is present.
	number(name string) (string, bool, error)
}

// jsonFields is the JSON object of a POST body.
type jsonFields map[string]json.RawMessage

func (f jsonFields) str(name string) (string, error) {
	raw, ok := f[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	if s, ok := plainString(raw); ok {
		return s, nil
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", InvalidField(name)
	}
	return s, nil
}

// plainString is the value of a JSON string literal without escapes and
// of printable ASCII only, the common case, which json.Unmarshal would
// decode to the bytes between the quotes; false for any other literal.
func plainString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(body), true
}

func (f jsonFields) number(name string) (string, bool, error) {
	raw, ok := f[name]
	if !ok || string(raw) == "null" {
		return "", false, nil
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return "", false, InvalidField(name)
	}
	return string(raw), true, nil
}

// queryFields are the parameters of GET /ping/{monitor}, by field name.
type queryFields map[string]string

func (f queryFields) str(name string) (string, error) { return f[name], nil }

func (f queryFields) number(name string) (string, bool, error) {
	s := f[name]
	if s == "" {
		return "", false, nil
	}
	if (s[0] != '-' && (s[0] < '0' || s[0] > '9')) || !json.Valid([]byte(s)) {
		return "", false, InvalidField(name)
	}
	return s, true, nil
}

// bodyBufs are the buffers ParseBody reads bodies into; one larger than
// maxPooledBody is not kept.
var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 64 << 10

// ParseBody reads a POST body (at most MaxBodyBytes: 413 beyond) into a
// pooled buffer and parses it with ParseJSON (the event holds copies of its fields, never the body's bytes).
func ParseBody(w http.ResponseWriter, r *http.Request) (*raftv1.Event, error) {
	buf := bodyBufs.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodyBufs.Put(buf)
		}
	}()
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &RequestError{Status: http.StatusRequestEntityTooLarge, Msg: "request too large"}
	}
	if err != nil {
		return nil, &RequestError{Status: http.StatusBadRequest, Msg: "invalid JSON"}
	}
	return ParseJSON(buf.Bytes())
}

// ParseJSON validates a POST body, which must be one JSON object. Fields
// the API does not know are ignored (senders add their own).
func ParseJSON(body []byte) (*raftv1.Event, error) {
	body = bytes.TrimSpace(body)
	var obj map[string]json.RawMessage
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &obj) != nil {
		return nil, &RequestError{Status: http.StatusBadRequest, Msg: "invalid JSON"}
	}
	return buildEvent(jsonFields(obj))
}

// queryNames maps a field of the event to its query parameter.
var queryNames = map[string]string{
	"event_type": "event_type", "status": "status", "state": "state",
	"duration": "duration", "exit_code": "exit_code", "host": "host",
	"project": "project", "message": "msg", "timestamp": "timestamp",
	"series": "series", "event_id": "event_id",
}

// ParseQuery validates a GET ping: monitor from the path, the other fields
// from the query (event_type defaults to ping). Invalid UTF-8 is replaced,
// as a JSON decoder does. Unknown parameters are ignored.
func ParseQuery(monitor string, q url.Values) (*raftv1.Event, error) {
	f := queryFields{"monitor": strings.ToValidUTF8(monitor, "\uFFFD")}
	for field, param := range queryNames {
		f[field] = strings.ToValidUTF8(q.Get(param), "\uFFFD")
	}
	if f["event_type"] == "" {
		f["event_type"] = eventTypePing
	}
	return buildEvent(f)
}

// buildEvent validates every field and returns the event without its
// account, receipt time and header event id. Fields are checked in a fixed
// order; the first error is returned.
func buildEvent(f fields) (*raftv1.Event, error) {
	ev := &raftv1.Event{}
	var err error
	if ev.EventType, err = boundedStr(f, "event_type", MaxEventType, true); err != nil {
		return nil, err
	}
	if ev.Monitor, err = boundedStr(f, "monitor", MaxMonitor, true); err != nil {
		return nil, err
	}
	if !validMonitor(ev.Monitor) {
		return nil, InvalidField("monitor")
	}
	if ev.Status, err = f.str("status"); err != nil {
		return nil, err
	}
	switch ev.Status {
	case "run", "complete", "fail", "skip":
	case "":
		if ev.EventType == eventTypePing {
			return nil, MissingField("status")
		}
	default:
		return nil, InvalidField("status")
	}
	if ev.State, err = f.str("state"); err != nil {
		return nil, err
	}
	if ev.State == "" && ev.EventType == eventTypeStream {
		return nil, MissingField("state")
	}
	if ev.Duration, err = durationField(f); err != nil {
		return nil, err
	}
	if ev.ExitCode, err = intField(f, "exit_code"); err != nil {
		return nil, err
	}
	if ev.Host, err = boundedStr(f, "host", MaxHost, false); err != nil {
		return nil, err
	}
	if ev.Project, err = boundedStr(f, "project", MaxProject, false); err != nil {
		return nil, err
	}
	if err := checkProject(ev.Project); err != nil {
		return nil, err
	}
	if ev.Message, err = f.str("message"); err != nil {
		return nil, err
	}
	ev.Message = CutUTF8(ev.Message, MaxMessageBytes)
	if ev.Timestamp, err = intField(f, "timestamp"); err != nil {
		return nil, err
	}
	if ev.Timestamp != nil && (*ev.Timestamp <= 0 || *ev.Timestamp > MaxUnixTimestamp) {
		return nil, InvalidField("timestamp")
	}
	if ev.Series, err = boundedStr(f, "series", MaxSeries, false); err != nil {
		return nil, err
	}
	if ev.EventId, err = boundedStr(f, "event_id", MaxEventID, false); err != nil {
		return nil, err
	}
	return ev, nil
}

// checkProject refuses a project the panel cannot show as a name
// (internal/names); "" is none.
func checkProject(p string) error {
	if p == "" {
		return nil
	}
	if err := names.Check(p); err != nil {
		return InvalidFieldWhy("project", err.Error())
	}
	return nil
}

// boundedStr reads a string field of at most max characters.
func boundedStr(f fields, name string, max int, required bool) (string, error) {
	s, err := f.str(name)
	switch {
	case err != nil:
		return "", err
	case s == "" && required:
		return "", MissingField(name)
	case utf8.RuneCountInString(s) > max:
		return "", InvalidField(name)
	}
	return s, nil
}

// durationField reads duration: a finite number of seconds, at least 0.
func durationField(f fields) (*float64, error) {
	lit, ok, err := f.number("duration")
	if err != nil || !ok {
		return nil, err
	}
	d, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsNaN(d) || math.IsInf(d, 0) || d < 0 {
		return nil, InvalidField("duration")
	}
	d += 0 // -0 becomes 0
	return &d, nil
}

// intField reads an integer field: a number literal without fraction or
// exponent that fits in 64 bits.
func intField(f fields, name string) (*int64, error) {
	lit, ok, err := f.number(name)
	if err != nil || !ok {
		return nil, err
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		return nil, InvalidField(name)
	}
	return &n, nil
}

// validMonitor tells whether s is a monitor name: letters, digits, - and _
// (its length is checked apart).
func validMonitor(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return s != ""
}

// CutUTF8 cuts s to at most max bytes without splitting a character.
func CutUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// MergeEventID sets ev's event_id from the Idempotency-Key header. When the
// body (or query) carries one too, the two must be equal.
func MergeEventID(ev *raftv1.Event, header string) error {
	if header == "" {
		return nil
	}
	if utf8.RuneCountInString(header) > MaxEventID || !utf8.ValidString(header) {
		return InvalidField("event_id")
	}
	if ev.EventId != "" && ev.EventId != header {
		return InvalidField("event_id")
	}
	ev.EventId = header
	return nil
}
