package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"lookout/internal/manifest"
)

// MonitorState is a monitor as the pause and resume endpoints answer it:
// its manifest and its read-only status.
type MonitorState struct {
	manifest.Manifest
	Status MonitorStatus `json:"status"`
}

// MonitorStatus is the part of a monitor's status the alert rules add to
// its state (decisions.md 12).
type MonitorStatus struct {
	State string `json:"state"`
	// PausedUntil is set while the monitor is paused with an until.
	PausedUntil *time.Time `json:"paused_until"`
	PauseReason string     `json:"pause_reason"`
}

// PauseMonitor pauses a monitor: its alerts are held until it is resumed
// or, when until is not zero, until then. reason is shown with the pause
// ("" for none).
func (m *Manage) PauseMonitor(ctx context.Context, uuid string, until time.Time, reason string) (*MonitorState, error) {
	body := map[string]any{}
	if !until.IsZero() {
		body["until"] = until.UTC().Format(time.RFC3339)
	}
	if reason != "" {
		body["reason"] = reason
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var out MonitorState
	if err := m.call(ctx, http.MethodPost, "/monitors/"+url.PathEscape(uuid)+"/pause", raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ResumeMonitor resumes a paused monitor (judged afresh at once).
func (m *Manage) ResumeMonitor(ctx context.Context, uuid string) (*MonitorState, error) {
	var out MonitorState
	if err := m.call(ctx, http.MethodPost, "/monitors/"+url.PathEscape(uuid)+"/resume", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
