package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Ingest sends events to the Ingest API (POST /ping) with an ingest key
// (ck_...).
type Ingest struct {
	t     transport
	trace func(Exchange)
}

// Exchange is one request Ping sent and the answer it got, as they went
// over the wire (lookout ping -v prints them).
type Exchange struct {
	Method, URL string
	// RequestBody is the JSON event sent.
	RequestBody []byte
	// Status is the answer's status line, such as "200 OK"; empty when no
	// answer came (Err says why).
	Status string
	Header http.Header
	Body   []byte
	Err    error
}

// SetTrace makes Ping call fn with every request it sends and the answer
// it got (nil: none). Call it before the first Ping.
func (c *Ingest) SetTrace(fn func(Exchange)) { c.trace = fn }

// NewIngest returns a client of the Ingest API at baseURL (for example
// http://127.0.0.1:8080). A nil httpClient means one with a 30 s timeout.
func NewIngest(baseURL, key string, httpClient *http.Client) *Ingest {
	return &Ingest{t: newTransport(baseURL, key, httpClient)}
}

// Event is the body of POST /ping (docs/api.md, Ingest API, Fields).
// Fields left at their zero value are not sent.
type Event struct {
	// EventType is "ping", "stream_event" or a custom type (required).
	EventType string `json:"event_type,omitempty"`
	// Monitor is the monitor's name: letters, digits, '-' and '_', 1 to 64.
	Monitor string `json:"monitor,omitempty"`
	// Status is run, complete, fail or skip; required for "ping" events.
	Status string `json:"status,omitempty"`
	// State is the state of a "stream_event".
	State string `json:"state,omitempty"`
	// Duration is the execution time in seconds.
	Duration *float64 `json:"duration,omitempty"`
	// ExitCode is the job's exit code.
	ExitCode *int `json:"exit_code,omitempty"`
	// Host is the host that ran the job.
	Host string `json:"host,omitempty"`
	// Project groups the monitor; it is created when it does not exist.
	Project string `json:"project,omitempty"`
	// Message is a free-form message or log excerpt (the service keeps
	// 64 KiB).
	Message string `json:"message,omitempty"`
	// Timestamp is the event's time in Unix seconds; the time of receipt
	// when nil.
	Timestamp *int64 `json:"timestamp,omitempty"`
	// Series pairs a run with its complete or fail (1 to 64 characters).
	Series string `json:"series,omitempty"`
	// EventID, set by the caller, makes sending the event again harmless:
	// the service stores one event per id (1 to 128 characters).
	EventID string `json:"event_id,omitempty"`
}

// PingResult is the service's answer to an accepted ping.
type PingResult struct {
	// Status is the body's status: "success", or "ok" when suspended.
	Status string
	// Suspended is true when the account is suspended: the answer is 200
	// but the event was not stored.
	Suspended bool
	// Message is the suspended answer's explanation.
	Message string
	// Quota is the account's monthly event quota, from the X-Quota-*
	// headers.
	Quota Quota
	// Created is true when the ping named a monitor the account did not
	// have, and the service created it (the answer's "created": true).
	Created bool
}

// Quota is the monthly event quota of an account as the X-Quota-*
// headers tell it.
type Quota struct {
	// State is ok, warning, exceeded or suspended; empty when not sent.
	State string
	// Limit is the monthly allowance; nil on plans without a limit.
	Limit *int64
	// Used is the number of events accepted in the current period; nil
	// when not sent.
	Used *int64
	// Reset is when the counter restarts; zero when not sent.
	Reset time.Time
}

// maxIngestAnswer bounds the body of an ingest answer that is read.
const maxIngestAnswer = 1 << 20

// Ping sends ev. An answer other than 2xx is an error that errors.As turns
// into *APIError (the 400/401/413/429 bodies are {"error"}, the 403 body
// {status, code, message}); Retryable tells whether trying again may
// succeed and RetryAfter how long the service asked to wait. A 2xx answer
// is success whatever its body.
func (c *Ingest) Ping(ctx context.Context, ev Event) (*PingResult, error) {
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode event: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.t.baseURL+"/ping", bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("make request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.t.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	x := Exchange{Method: req.Method, URL: req.URL.String(), RequestBody: b}
	resp, err := c.t.http.Do(req)
	if err != nil {
		x.Err = err
		c.traced(x)
		return nil, &netError{fmt.Errorf("POST /ping: %w", err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxIngestAnswer))
	x.Status, x.Header, x.Body, x.Err = resp.Status, resp.Header, data, err
	c.traced(x)
	if err != nil {
		return nil, &netError{fmt.Errorf("POST /ping: read answer: %w", err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, ingestError(resp, data)
	}
	var body struct {
		Status   string    `json:"status"`
		Created  bool      `json:"created"`
		Quota    string    `json:"quota"`
		ResetsAt time.Time `json:"resets_at"`
		Message  string    `json:"message"`
	}
	_ = json.Unmarshal(data, &body) // the event was accepted even if the body is odd
	res := &PingResult{Status: body.Status, Message: body.Message, Quota: quotaHeaders(resp.Header), Created: body.Created}
	if body.Quota != "" && res.Quota.State == "" {
		res.Quota.State = body.Quota
	}
	if res.Quota.Reset.IsZero() {
		res.Quota.Reset = body.ResetsAt
	}
	res.Suspended = body.Quota == "suspended" || res.Quota.State == "suspended"
	return res, nil
}

func (c *Ingest) traced(x Exchange) {
	if c.trace != nil {
		c.trace(x)
	}
}

// quotaHeaders reads the X-Quota-* headers; missing or unreadable ones stay
// unset.
func quotaHeaders(h http.Header) Quota {
	q := Quota{State: h.Get("X-Quota-State")}
	if n, err := strconv.ParseInt(h.Get("X-Quota-Limit"), 10, 64); err == nil {
		q.Limit = &n
	}
	if n, err := strconv.ParseInt(h.Get("X-Quota-Used"), 10, 64); err == nil {
		q.Used = &n
	}
	if t, err := time.Parse(time.RFC3339, h.Get("X-Quota-Reset")); err == nil {
		q.Reset = t
	}
	return q
}

// ingestError reads a non-2xx answer, keeping its Retry-After.
func ingestError(resp *http.Response, data []byte) error {
	e := apiError(resp.StatusCode, data)
	if e.Message == "" {
		// The 503 of a node that cannot take events: {"status", "reason"}.
		var b struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(data, &b) == nil && b.Reason != "" {
			e.Message = b.Reason
		} else {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	if d := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); d > 0 {
		return &retryAfterError{APIError: e, after: d}
	}
	return e
}

// parseRetryAfter reads a Retry-After value: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, 24*3600)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// retryAfterError is an *APIError whose answer carried Retry-After.
type retryAfterError struct {
	*APIError
	after time.Duration
}

func (e *retryAfterError) Unwrap() error { return e.APIError }

// netError is a request that got no answer (connection refused, reset,
// timed out, cut short).
type netError struct{ err error }

func (e *netError) Error() string { return e.err.Error() }
func (e *netError) Unwrap() error { return e.err }

// Retryable tells whether sending the same request again may succeed: true
// for network errors and for the answers 429, 502, 503 and 504; false for
// other answers, for errors of the request itself and when the caller's
// context was canceled.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		switch ae.Status {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var ne *netError
	return errors.As(err, &ne)
}

// IsNetworkError tells whether err is a request that got no answer (a
// refused or reset connection, a timeout), as opposed to an answer.
func IsNetworkError(err error) bool {
	var ne *netError
	return errors.As(err, &ne)
}

// RetryAfter is how long the answer behind err asked the caller to wait
// before trying again (its Retry-After header), 0 when it did not say.
func RetryAfter(err error) time.Duration {
	var re *retryAfterError
	if errors.As(err, &re) {
		return re.after
	}
	return 0
}
