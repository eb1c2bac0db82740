package manage

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/manifest"
	"lookout/internal/names"
)

// Bounds of a pause (decisions.md 12).
const (
	// MaxPauseFor bounds how far ahead a pause's until may be.
	MaxPauseFor = 366 * 24 * time.Hour
	// MaxPauseReason bounds its reason, in characters.
	MaxPauseReason = 255
)

// The codes of a refused pause, under the key "pause" of a 422 body.
const (
	keyPause          = "pause"
	codeUntilInvalid  = "until_invalid"
	codeReasonInvalid = "reason_invalid"
)

// handlePause serves POST /api/v1/monitors/{uuid}/pause with an optional
// body {until, reason}: the monitor's alerts are held until it is resumed
// or until passes (runtime state: apply and export ignore it). 200 with
// the monitor and its status.
func (a *API) handlePause(w http.ResponseWriter, r *http.Request) {
	raw, ok := a.body(w, r)
	if !ok {
		return
	}
	until, reason, errs := parsePause(raw, a.now())
	if len(errs) > 0 {
		var b manifest.BundleErrors
		b.Add(keyPause, errs...)
		writeInvalid(w, b.Body("the pause is invalid"))
		return
	}
	a.pause(w, r, &raftv1.PauseMonitor{Pause: true, UntilUnixMs: until, Reason: reason})
}

// handleResume serves POST /api/v1/monitors/{uuid}/resume: the monitor is
// judged afresh now (a ping monitor expects its next run from now; a held
// failure that still stands is alerted once). 200 with the monitor.
func (a *API) handleResume(w http.ResponseWriter, r *http.Request) {
	a.pause(w, r, &raftv1.PauseMonitor{})
}

// pause proposes c for the {uuid} monitor and answers with it.
func (a *API) pause(w http.ResponseWriter, r *http.Request, c *raftv1.PauseMonitor) {
	if !a.consistent(w, r) {
		return
	}
	m, ok := a.monitor(w, r)
	if !ok {
		return
	}
	c.AccountId, c.MonitorUuid = m.GetAccountId(), m.GetUuid()
	res, ok := a.apply(w, r, &raftv1.Command{Op: &raftv1.Command_PauseMonitor{PauseMonitor: c}})
	if !ok {
		return
	}
	switch res.GetStatus() {
	case raftv1.Status_STATUS_OK:
	case raftv1.Status_STATUS_NOT_FOUND:
		notFound(w, m.GetUuid())
		return
	default:
		a.internal(w, errString(res.GetMessage()))
		return
	}
	m, ok = a.monitor(w, r) // as the command left it (applied on this node: Apply returned)
	if ok {
		writeJSON(w, http.StatusOK, a.withStatus(m))
	}
}

// parsePause reads a pause's body: empty, {} or {until, reason}. until is
// an RFC 3339 time after now and at most MaxPauseFor ahead; reason at most
// MaxPauseReason characters obeying the rule of names ("" for none).
func parsePause(raw []byte, now time.Time) (int64, string, manifest.Errors) {
	var errs manifest.Errors
	add := func(field, code, msg string) {
		errs = append(errs, manifest.Error{Field: field, Code: code, Message: msg})
	}
	if len(raw) == 0 {
		return 0, "", nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		add("", manifest.CodeInvalidJSON, "the body must be a JSON object: {\"until\": \"<RFC 3339 time>\", \"reason\": \"...\"}, both optional")
		return 0, "", errs
	}
	var until int64
	if v, ok := fields["until"]; ok && string(v) != "null" {
		var s string
		t, err := time.Time{}, json.Unmarshal(v, &s)
		if err == nil {
			t, err = time.Parse(time.RFC3339, s)
		}
		switch {
		case err != nil:
			add("until", codeUntilInvalid, "until must be an RFC 3339 time such as 2026-03-15T18:00:00Z")
		case !t.After(now):
			add("until", codeUntilInvalid, "until must be in the future")
		case t.Sub(now) > MaxPauseFor:
			add("until", codeUntilInvalid, "until must be at most 366 days ahead")
		default:
			until = t.UnixMilli()
		}
	}
	var reason string
	if v, ok := fields["reason"]; ok && string(v) != "null" {
		switch err := json.Unmarshal(v, &reason); {
		case err != nil:
			add("reason", codeReasonInvalid, "reason must be a string")
		case len([]rune(reason)) > MaxPauseReason:
			add("reason", codeReasonInvalid, "reason must be at most 255 characters long")
		case reason != "" && names.Check(reason) != nil:
			add("reason", codeReasonInvalid, "reason "+names.Check(reason).Error())
		}
	}
	var extra []string
	for k := range fields {
		if k != "until" && k != "reason" {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		add(k, manifest.CodeFieldUnknown, k+" is not a field of a pause (until, reason)")
	}
	return until, reason, errs
}
