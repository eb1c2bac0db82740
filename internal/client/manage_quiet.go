package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// PauseMonitor pauses a monitor: its alerts are held until it is resumed
// or, when until is not zero, until then. reason is shown with the pause
// ("" for none).
func (m *Manage) PauseMonitor(ctx context.Context, uuid string, until time.Time, reason string) (*MonitorWithStatus, error) {
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
	var out MonitorWithStatus
	if err := m.call(ctx, http.MethodPost, "/monitors/"+url.PathEscape(uuid)+"/pause", raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ResumeMonitor resumes a paused monitor (judged afresh at once).
func (m *Manage) ResumeMonitor(ctx context.Context, uuid string) (*MonitorWithStatus, error) {
	var out MonitorWithStatus
	if err := m.call(ctx, http.MethodPost, "/monitors/"+url.PathEscape(uuid)+"/resume", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
