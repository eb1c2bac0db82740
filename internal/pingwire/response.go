package pingwire

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// RequestError is an answer with the body {"error": Msg}.
type RequestError struct {
	Status int
	Msg    string
}

func (e *RequestError) Error() string { return e.Msg }

// MissingField is the 400 for a required field that is absent or empty.
func MissingField(name string) error {
	return &RequestError{Status: http.StatusBadRequest, Msg: "required field missing: " + name}
}

// InvalidField is the 400 for a field of the wrong type or value.
func InvalidField(name string) error {
	return &RequestError{Status: http.StatusBadRequest, Msg: "invalid field: " + name}
}

// InvalidFieldWhy is the 400 for a field whose value is refused, with the
// reason.
func InvalidFieldWhy(name, why string) error {
	return &RequestError{Status: http.StatusBadRequest, Msg: "invalid field: " + name + ": " + why}
}

// The bodies of the answers to a ping.
type (
	// ErrorBody is {"error": ...}.
	ErrorBody struct {
		Error string `json:"error"`
	}
	// SuccessBody is {"status": "success"}, with "created": true when
	// the ping created its monitor.
	SuccessBody struct {
		Status  string `json:"status"`
		Created bool   `json:"created,omitempty"`
	}
)

// Success is the body of an accepted ping.
var Success = SuccessBody{Status: "success"}

// The header values of every JSON answer, shared (net/http only reads
// them): setting them allocates nothing.
var (
	contentTypeJSON = []string{"application/json"}
	cacheNoStore    = []string{"no-store"}
)

// successBody is Success as WriteJSON encodes it, byte for byte;
// createdBody the answer of a ping that created its monitor.
var (
	successBody = []byte(`{"status":"success"}` + "\n")
	createdBody = []byte(`{"status":"success","created":true}` + "\n")
)

// WriteJSON writes v as the JSON body of a status answer.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	setJSONHeaders(w.Header())
	w.WriteHeader(status)
	// The status line is out; an encoding error can only be a broken
	// connection, which the client sees.
	_ = json.NewEncoder(w).Encode(v)
}

// WriteSuccess writes the 200 answer of an accepted ping (Success) without
// encoding it: the hot path of the Ingest API. created adds
// "created": true: the ping named a monitor the account did not have, and
// made it (a mistyped name shows up at once).
func WriteSuccess(w http.ResponseWriter, created bool) {
	setJSONHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	body := successBody
	if created {
		body = createdBody
	}
	_, _ = w.Write(body) // a broken connection, which the client sees
}

// setJSONHeaders sets the Content-Type and Cache-Control of a JSON answer.
// The keys are in canonical form already.
func setJSONHeaders(h http.Header) {
	h["Content-Type"] = contentTypeJSON
	h["Cache-Control"] = cacheNoStore
}

// WriteError writes {"error": msg}.
func WriteError(w http.ResponseWriter, status int, msg string) {
	WriteJSON(w, status, ErrorBody{Error: msg})
}

// SetQuotaHeaders sets the X-Quota-* headers (docs/api.md, "Answers") from q as of
// now.
func SetQuotaHeaders(h http.Header, q *raftv1.QuotaStatus, now time.Time) {
	// Set on every ping's answer: the keys are written in canonical form
	// and the values share one slice, instead of five h.Set calls.
	reset := time.UnixMilli(q.GetResetsAtUnixMs()).UTC()
	v := []string{q.GetState(), strconv.FormatInt(q.GetUsed(), 10), reset.Format(time.RFC3339),
		strconv.FormatInt(SecondsUntil(now, reset), 10), ""}
	h["X-Quota-State"], h["X-Quota-Used"], h["X-Quota-Reset"], h["X-Quota-Reset-In"] = v[0:1:1], v[1:2:2], v[2:3:3], v[3:4:4]
	if q.Limit != nil {
		v[4] = strconv.FormatInt(q.GetLimit(), 10)
		h["X-Quota-Limit"] = v[4:5:5]
	}
}

// SecondsUntil is the whole seconds from now to t, rounded up, at least 0.
func SecondsUntil(now, t time.Time) int64 {
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// CheckTimestamp refuses an event whose timestamp is more than
// MaxTimestampSkew ahead of now (the receiving process's clock at
// receipt), or older than retention when retention is set.
func CheckTimestamp(ev *raftv1.Event, now time.Time, retention time.Duration) error {
	if ev.Timestamp == nil {
		return nil
	}
	at := time.UnixMilli(ev.GetTimestamp() * 1000)
	if at.After(now.Add(MaxTimestampSkew)) {
		return InvalidFieldWhy("timestamp", "more than 5 minutes in the future")
	}
	if retention > 0 && at.Before(now.Add(-retention)) {
		return InvalidFieldWhy("timestamp", "older than the event retention age ("+retention.String()+")")
	}
	return nil
}
