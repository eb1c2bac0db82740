package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"lookout/internal/manifest"
)

// MonitorStatus is the read-only status the Management API adds to a
// monitor (GET /api/v1/monitors/{uuid}, and the list with
// include=status). A ping monitor has LastPingAt, NextExpectedAt,
// NextDeadlineAt and LastDuration; a check LastExecutionAt, NextRunAt, LastStatus and, for an
// ssl_check, DaysLeft. Fields the client does not know are kept in Other.
type MonitorStatus struct {
	// State is new, up, running, late, down, failed, paused or unknown
	// (ping monitors); pending, up, down, paused or unknown (checks).
	State           string     `json:"state"`
	LastPingAt      *time.Time `json:"last_ping_at,omitempty"`
	NextExpectedAt  *time.Time `json:"next_expected_at,omitempty"`
	NextDeadlineAt  *time.Time `json:"next_deadline_at,omitempty"`
	LastDuration    *float64   `json:"last_duration,omitempty"`
	LastExecutionAt *time.Time `json:"last_execution_at,omitempty"`
	NextRunAt       *time.Time `json:"next_run_at,omitempty"`
	LastStatus      *string    `json:"last_status,omitempty"`
	DaysLeft        *int64     `json:"days_left,omitempty"`
	// PausedUntil is set while the monitor is paused with an until;
	// PauseReason is the pause's reason, if it gave one.
	PausedUntil *time.Time `json:"paused_until,omitempty"`
	PauseReason string     `json:"pause_reason,omitempty"`
	// Other holds the fields not named above, as the answer had them.
	Other map[string]json.RawMessage `json:"-"`
}

// statusKnown are the JSON names of MonitorStatus's fields.
var statusKnown = map[string]bool{
	"state": true, "last_ping_at": true, "next_expected_at": true, "next_deadline_at": true, "last_duration": true,
	"last_execution_at": true, "next_run_at": true, "last_status": true, "days_left": true,
	"paused_until": true, "pause_reason": true,
}

// UnmarshalJSON reads the known fields and keeps the rest in Other.
func (s *MonitorStatus) UnmarshalJSON(b []byte) error {
	type plain MonitorStatus
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	s.Other = nil
	for k, v := range all {
		if !statusKnown[k] {
			if s.Other == nil {
				s.Other = map[string]json.RawMessage{}
			}
			s.Other[k] = v
		}
	}
	return nil
}

// MonitorWithStatus is a monitor's manifest with its status.
type MonitorWithStatus struct {
	manifest.Manifest
	Status *MonitorStatus `json:"status,omitempty"`
}

// Monitor returns one monitor's manifest with its status; an unknown uuid
// (or another account's) is a 404 *APIError.
func (m *Manage) Monitor(ctx context.Context, uuid string) (*MonitorWithStatus, error) {
	var out MonitorWithStatus
	if err := m.call(ctx, http.MethodGet, "/monitors/"+url.PathEscape(uuid), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AllMonitorsWithStatus returns every monitor of kind (empty for all
// kinds) with its status, in (kind, name) order, page by page.
func (m *Manage) AllMonitorsWithStatus(ctx context.Context, kind string) ([]MonitorWithStatus, error) {
	out := []MonitorWithStatus{}
	q := url.Values{"include": {"status"}, "limit": {strconv.Itoa(allMonitorsPage)}}
	if kind != "" {
		q.Set("kind", kind)
	}
	for {
		var page struct {
			Monitors   []MonitorWithStatus `json:"monitors"`
			NextCursor string              `json:"next_cursor"`
		}
		if err := m.call(ctx, http.MethodGet, "/monitors?"+q.Encode(), nil, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Monitors...)
		if page.NextCursor == "" {
			return out, nil
		}
		if page.NextCursor == q.Get("cursor") {
			return nil, errors.New("GET /api/v1/monitors: the answer repeats its cursor")
		}
		q.Set("cursor", page.NextCursor)
	}
}

// Execution is one run of a check in one region
// (GET /api/v1/monitors/{uuid}/executions), newest slot first.
type Execution struct {
	ID     string `json:"id"`
	Region string `json:"region"`
	// Agent is the name of the agent that ran it; empty when the control
	// plane did.
	Agent string `json:"agent,omitempty"`
	// Slot is the schedule time the execution is for.
	Slot time.Time `json:"slot"`
	// Status is pending, running, retrying, success or failed.
	Status     string     `json:"status"`
	Attempts   int64      `json:"attempts"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	DurationMs int64      `json:"duration_ms"`
	// Error says why the last attempt failed.
	Error string         `json:"error,omitempty"`
	HTTP  *ExecutionHTTP `json:"http,omitempty"`
	SSL   *ExecutionSSL  `json:"ssl,omitempty"`
}

// ExecutionHTTP is what an http_check's execution saw.
type ExecutionHTTP struct {
	StatusCode    int64 `json:"status_code"`
	ResponseBytes int64 `json:"response_bytes"`
	TimingsMs     struct {
		DNS     int64 `json:"dns"`
		Connect int64 `json:"connect"`
		TLS     int64 `json:"tls"`
		TTFB    int64 `json:"ttfb"`
		Total   int64 `json:"total"`
	} `json:"timings_ms"`
}

// ExecutionSSL is the certificate an ssl_check's execution saw.
type ExecutionSSL struct {
	ExpiresAt     *time.Time `json:"expires_at"`
	DaysLeft      int64      `json:"days_left"`
	Issuer        string     `json:"issuer"`
	Subject       string     `json:"subject"`
	DNSNames      []string   `json:"dns_names"`
	ChainValid    bool       `json:"chain_valid"`
	HostnameValid bool       `json:"hostname_valid"`
}

// Executions returns a check's executions, newest slot first; limit 0 is
// the service's default (100), at most 1000. A ping monitor has none.
func (m *Manage) Executions(ctx context.Context, uuid string, limit int) ([]Execution, error) {
	execs, _, err := m.ExecutionsBefore(ctx, uuid, limit, "")
	return execs, err
}

// ExecutionsBefore returns a page of a check's executions, newest slot
// first, as EventsBefore does for events.
func (m *Manage) ExecutionsBefore(ctx context.Context, uuid string, limit int, before string) (execs []Execution, next string, err error) {
	var out struct {
		Executions []Execution `json:"executions"`
		NextBefore string      `json:"next_before"`
	}
	if err := m.call(ctx, http.MethodGet, historyPath(uuid, "executions", limit, before), nil, &out); err != nil {
		return nil, "", err
	}
	return out.Executions, out.NextBefore, nil
}
