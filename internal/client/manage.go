package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"lookout/internal/manifest"
)

// managePrefix is the path of the Management API.
const managePrefix = "/api/v1"

// allMonitorsPage is the page size AllMonitors asks for.
const allMonitorsPage = 1000

// Manage calls the Management API, /api/v1, with a management key (mk_...):
// monitors as manifests, export and apply of bundles, the account and a
// monitor's events. An answer other than 2xx is an error: a 422 is a
// *ValidationError; the others are *APIError, whose Code is the body's
// code or error_code (403 delete_requires_confirm, config_as_code_disabled,
// insufficient_scope; 401 unauthenticated; 404 not_found; 429
// rate_limited). Retryable and RetryAfter work on these errors too.
type Manage struct {
	t transport
}

// NewManage returns a client of the Management API at baseURL (for example
// http://127.0.0.1:8080). A nil httpClient means one with a 30 s timeout.
func NewManage(baseURL, key string, httpClient *http.Client) *Manage {
	return &Manage{t: newTransport(baseURL, key, httpClient)}
}

// Account returns the key's account: plan, usage and quota state.
func (m *Manage) Account(ctx context.Context) (*ManageAccount, error) {
	var out ManageAccount
	if err := m.call(ctx, http.MethodGet, "/account", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListMonitors returns the monitors in (kind, name) order: all of them, or
// one page when opts.Limit is set.
func (m *Manage) ListMonitors(ctx context.Context, opts ListOptions) (*MonitorPage, error) {
	q := url.Values{}
	if opts.Kind != "" {
		q.Set("kind", opts.Kind)
	}
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.Cursor != "" {
		q.Set("cursor", opts.Cursor)
	}
	path := "/monitors"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out MonitorPage
	if err := m.call(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AllMonitors returns every monitor of kind (empty for all kinds), page by
// page, following next_cursor.
func (m *Manage) AllMonitors(ctx context.Context, kind string) ([]manifest.Manifest, error) {
	out := []manifest.Manifest{}
	opts := ListOptions{Kind: kind, Limit: allMonitorsPage}
	for {
		page, err := m.ListMonitors(ctx, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Monitors...)
		if page.NextCursor == "" {
			return out, nil
		}
		if page.NextCursor == opts.Cursor {
			return nil, errors.New("GET /api/v1/monitors: the answer repeats its cursor")
		}
		opts.Cursor = page.NextCursor
	}
}

// GetMonitor returns one monitor's manifest; an unknown uuid (or another
// account's) is a 404 *APIError.
func (m *Manage) GetMonitor(ctx context.Context, uuid string) (*manifest.Manifest, error) {
	var out manifest.Manifest
	if err := m.call(ctx, http.MethodGet, "/monitors/"+url.PathEscape(uuid), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateMonitor creates a monitor and returns the stored manifest with its
// uuid. A ManifestVersion of 0 is sent as 1; a nil Project is no project.
func (m *Manage) CreateMonitor(ctx context.Context, mf manifest.Manifest) (*manifest.Manifest, error) {
	raw, err := encodeManifest(mf)
	if err != nil {
		return nil, err
	}
	return m.CreateMonitorJSON(ctx, raw)
}

// CreateMonitorJSON is CreateMonitor with the manifest as JSON, sent as
// it is.
func (m *Manage) CreateMonitorJSON(ctx context.Context, raw json.RawMessage) (*manifest.Manifest, error) {
	var out manifest.Manifest
	if err := m.call(ctx, http.MethodPost, "/monitors", raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReplaceMonitor replaces a monitor wholesale and returns the stored
// manifest: its kind, and a ping's name, cannot change (422); omitting
// display_name clears it, omitting notification_group detaches it, a nil
// Project leaves the project as it is.
func (m *Manage) ReplaceMonitor(ctx context.Context, uuid string, mf manifest.Manifest) (*manifest.Manifest, error) {
	raw, err := encodeManifest(mf)
	if err != nil {
		return nil, err
	}
	return m.ReplaceMonitorJSON(ctx, uuid, raw)
}

// ReplaceMonitorJSON is ReplaceMonitor with the manifest as JSON, sent as
// it is.
func (m *Manage) ReplaceMonitorJSON(ctx context.Context, uuid string, raw json.RawMessage) (*manifest.Manifest, error) {
	var out manifest.Manifest
	if err := m.call(ctx, http.MethodPut, "/monitors/"+url.PathEscape(uuid), raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteMonitor deletes a monitor and its history (it sends confirm=true).
func (m *Manage) DeleteMonitor(ctx context.Context, uuid string) error {
	return m.call(ctx, http.MethodDelete, "/monitors/"+url.PathEscape(uuid)+"?confirm=true", nil, nil)
}

// Export returns the whole account as a bundle without uuids, ordered by
// kind then name; Apply takes it back unchanged.
func (m *Manage) Export(ctx context.Context) (*manifest.Bundle, error) {
	var out manifest.Bundle
	if err := m.call(ctx, http.MethodGet, "/monitors/export", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ExportJSON is Export as the answer's JSON.
func (m *Manage) ExportJSON(ctx context.Context) (json.RawMessage, error) {
	return m.send(ctx, http.MethodGet, "/monitors/export", nil)
}

// Apply reconciles the account with bundle, a JSON bundle sent as it is
// (convert YAML with manifest.BundleFromYAML first). With dryRun nothing is
// written. Apply never deletes, is all or nothing (a 422
// *ValidationError keyed bundle or monitors.<i> writes nothing) and
// writes nothing when nothing changes.
func (m *Manage) Apply(ctx context.Context, bundle []byte, dryRun bool) (*ApplyReport, error) {
	path := "/monitors/apply"
	if dryRun {
		path += "?dry_run=true"
	}
	var out ApplyReport
	if err := m.call(ctx, http.MethodPost, path, bundle, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ApplyBundle is Apply with a Bundle; a ManifestVersion of 0, of the
// bundle or of an entry, is sent as 1.
func (m *Manage) ApplyBundle(ctx context.Context, b manifest.Bundle, dryRun bool) (*ApplyReport, error) {
	if b.ManifestVersion == 0 {
		b.ManifestVersion = manifest.Version
	}
	b.Monitors = append([]manifest.Manifest{}, b.Monitors...)
	for i := range b.Monitors {
		if b.Monitors[i].ManifestVersion == 0 {
			b.Monitors[i].ManifestVersion = manifest.Version
		}
	}
	raw, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode bundle: %w", err)
	}
	return m.Apply(ctx, raw, dryRun)
}

// Events returns a monitor's newest events first; limit 0 is the service's
// default (100), at most 1000.
func (m *Manage) Events(ctx context.Context, uuid string, limit int) ([]MonitorEvent, error) {
	evs, _, err := m.EventsBefore(ctx, uuid, limit, "")
	return evs, err
}

// EventsBefore returns a page of a monitor's events, newest first: the
// newest when before is "", else those older than the cursor before (a
// page's next). next is the cursor of the page after this one, "" at the
// oldest.
func (m *Manage) EventsBefore(ctx context.Context, uuid string, limit int, before string) (events []MonitorEvent, next string, err error) {
	var out struct {
		Events     []MonitorEvent `json:"events"`
		NextBefore string         `json:"next_before"`
	}
	if err := m.call(ctx, http.MethodGet, historyPath(uuid, "events", limit, before), nil, &out); err != nil {
		return nil, "", err
	}
	return out.Events, out.NextBefore, nil
}

// historyPath is the path of a page of a monitor's events or executions.
func historyPath(uuid, what string, limit int, before string) string {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if before != "" {
		q.Set("before", before)
	}
	path := "/monitors/" + url.PathEscape(uuid) + "/" + what
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

// encodeManifest marshals mf, with manifest_version 1 when unset.
func encodeManifest(mf manifest.Manifest) (json.RawMessage, error) {
	if mf.ManifestVersion == 0 {
		mf.ManifestVersion = manifest.Version
	}
	raw, err := json.Marshal(mf)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return raw, nil
}

// call sends body (JSON; nil for none) and decodes a 2xx answer into out
// (nil: ignore it).
func (m *Manage) call(ctx context.Context, method, path string, body []byte, out any) error {
	data, err := m.send(ctx, method, path, body)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s%s: decode answer: %w", method, managePrefix, path, err)
	}
	return nil
}

// send sends one request and returns the body of a 2xx answer.
func (m *Manage) send(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, m.t.baseURL+managePrefix+path, rd)
	if err != nil {
		return nil, fmt.Errorf("make request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+m.t.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := m.t.http.Do(req)
	if err != nil {
		return nil, &netError{fmt.Errorf("%s %s%s: %w", method, managePrefix, path, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, &netError{fmt.Errorf("%s %s%s: read answer: %w", method, managePrefix, path, err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, manageError(resp, data)
	}
	return data, nil
}

// manageError reads a non-2xx answer: a 422 becomes a *ValidationError, an
// answer with Retry-After keeps it for RetryAfter.
func manageError(resp *http.Response, data []byte) error {
	e := apiError(resp.StatusCode, data)
	if resp.StatusCode == http.StatusUnprocessableEntity {
		var b struct {
			Errors     map[string][]string `json:"errors"`
			ErrorCodes map[string][]string `json:"error_codes"`
		}
		_ = json.Unmarshal(data, &b) // an odd body still is a 422
		return &ValidationError{APIError: e, Errors: b.Errors, ErrorCodes: b.ErrorCodes}
	}
	if d := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); d > 0 {
		return &retryAfterError{APIError: e, after: d}
	}
	return e
}
