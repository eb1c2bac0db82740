package client

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"lookout/internal/manifest"
)

// ManageAccount is the account of a management key (GET /api/v1/account):
// its plan, what it used in the current period and its quota state.
type ManageAccount struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Plan  Plan   `json:"plan"`
	Usage Usage  `json:"usage"`
	// QuotaState is ok, warning, exceeded or suspended.
	QuotaState string `json:"quota_state"`
}

// ListOptions narrows GET /api/v1/monitors. The zero value lists every
// monitor in one answer.
type ListOptions struct {
	// Kind is ping, http_check, ssl_check, tcp_check or dns_check; empty for all.
	Kind string
	// Limit (1 to 1000) asks for a page; 0 for every monitor at once.
	Limit int
	// Cursor is the NextCursor of the previous page (needs Limit).
	Cursor string
}

// MonitorPage is one answer of GET /api/v1/monitors, in (kind, name) order.
type MonitorPage struct {
	Monitors []manifest.Manifest `json:"monitors"`
	// NextCursor is set while more monitors remain; pass it as
	// ListOptions.Cursor for the next page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// The actions of an ApplyChange.
const (
	ActionCreate = "create"
	ActionUpdate = "update"
)

// ApplyReport is the answer of POST /api/v1/monitors/apply,
// the same for a dry run and a real one.
type ApplyReport struct {
	DryRun  bool          `json:"dry_run"`
	Summary ApplySummary  `json:"summary"`
	Changes []ApplyChange `json:"changes"`
	// Orphaned are the account's monitors absent from the bundle; apply
	// leaves them alone.
	Orphaned []ApplyOrphan `json:"orphaned"`
}

// HasChanges reports whether the apply creates or updates any monitor
// (orphans change nothing: apply never deletes).
func (r *ApplyReport) HasChanges() bool {
	return r.Summary.Create+r.Summary.Update > 0 || len(r.Changes) > 0
}

// ApplySummary counts the entries of an apply by outcome.
type ApplySummary struct {
	Create    int `json:"create"`
	Update    int `json:"update"`
	Unchanged int `json:"unchanged"`
	Orphaned  int `json:"orphaned"`
}

// ApplyChange is a monitor an apply creates or updates.
type ApplyChange struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Action is ActionCreate or ActionUpdate.
	Action string `json:"action"`
	// UUID is set for updates, and for the creates of a real apply.
	UUID string `json:"uuid,omitempty"`
	// Diff maps the field paths of an update (timeout_seconds,
	// config.url, tags, ...) to their [old, new] JSON values; null is
	// unset.
	Diff map[string][2]json.RawMessage `json:"diff,omitempty"`
}

// ApplyOrphan is a monitor of the account that the bundle does not name.
type ApplyOrphan struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	UUID string `json:"uuid"`
}

// MonitorEvent is one event of a monitor's history, newest first
// (GET /api/v1/monitors/{uuid}/events).
type MonitorEvent struct {
	EventType string   `json:"event_type"`
	Status    string   `json:"status,omitempty"`
	State     string   `json:"state,omitempty"`
	Color     string   `json:"color"`
	Duration  *float64 `json:"duration,omitempty"`
	ExitCode  *int64   `json:"exit_code,omitempty"`
	Host      string   `json:"host,omitempty"`
	Message   string   `json:"message,omitempty"`
	Series    string   `json:"series,omitempty"`
	// Timestamp is the event's time in Unix seconds.
	Timestamp int64 `json:"timestamp"`
	// ReceivedAt is when a node accepted the event.
	ReceivedAt time.Time `json:"received_at"`
}

// ValidationError is a 422 answer of the Management API: an
// invalid manifest or bundle, a duplicate or immutable name, a plan limit.
// errors.As finds it, and the *APIError it wraps.
type ValidationError struct {
	*APIError
	// Errors maps a key (manifest, bundle or monitors.<i>) to messages
	// for people; their wording may change.
	Errors map[string][]string
	// ErrorCodes has the keys of Errors, with the stable codes at the same
	// positions. Programs read these.
	ErrorCodes map[string][]string
}

// Unwrap returns the *APIError.
func (e *ValidationError) Unwrap() error { return e.APIError }

// Problem is one problem of a ValidationError.
type Problem struct {
	Key, Code, Message string
}

// String is "key: code: message".
func (p Problem) String() string {
	return fmt.Sprintf("%s: %s: %s", p.Key, p.Code, p.Message)
}

// Problems lists every problem: the keys manifest and bundle first, then
// monitors.<i> by index, then any other by name; within a key, in the
// answer's order.
func (e *ValidationError) Problems() []Problem {
	keys := map[string]bool{}
	for k := range e.Errors {
		keys[k] = true
	}
	for k := range e.ErrorCodes {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool { return keyLess(sorted[i], sorted[j]) })
	var out []Problem
	for _, k := range sorted {
		msgs, codes := e.Errors[k], e.ErrorCodes[k]
		for i := range max(len(msgs), len(codes)) {
			p := Problem{Key: k}
			if i < len(msgs) {
				p.Message = msgs[i]
			}
			if i < len(codes) {
				p.Code = codes[i]
			}
			out = append(out, p)
		}
	}
	return out
}

// Has reports whether code is among the problems.
func (e *ValidationError) Has(code string) bool {
	for _, codes := range e.ErrorCodes {
		for _, c := range codes {
			if c == code {
				return true
			}
		}
	}
	return false
}

// Error is the status and message followed by the first problems.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString(e.APIError.Error())
	problems := e.Problems()
	for i, p := range problems {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(problems)-i)
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// keyLess orders the keys of a 422 body: manifest, bundle, monitors.<i> by
// index, then the rest by name.
func keyLess(a, b string) bool {
	ra, ia := keyRank(a)
	rb, ib := keyRank(b)
	if ra != rb {
		return ra < rb
	}
	if ia != ib {
		return ia < ib
	}
	return a < b
}

func keyRank(k string) (rank, index int) {
	switch k {
	case manifest.KeyManifest:
		return 0, 0
	case manifest.KeyBundle:
		return 1, 0
	}
	if s, ok := strings.CutPrefix(k, "monitors."); ok {
		if n, err := strconv.Atoi(s); err == nil {
			return 2, n
		}
	}
	return 3, 0
}
