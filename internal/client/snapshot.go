package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// RestoredSnapshot is the answer of a restore.
type RestoredSnapshot struct {
	// AppliedIndex is the raft index the snapshot was saved at.
	AppliedIndex uint64 `json:"applied_index"`
	// Bytes is the size of the file restored.
	Bytes int64 `json:"bytes"`
}

// SaveSnapshot streams a backup file of the cluster's state to w and
// returns its size. It is not checked here: state.CheckBackup does that.
// Only ctx bounds it (a large state takes longer than the client's
// timeout).
func (a *Admin) SaveSnapshot(ctx context.Context, w io.Writer) (int64, error) {
	resp, err := a.stream(ctx, http.MethodGet, nil, -1)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("GET /admin/v1/snapshot: read the snapshot: %w", err)
	}
	return n, nil
}

// RestoreSnapshot sends a backup file (size bytes read from r) to be
// restored into the whole cluster.
func (a *Admin) RestoreSnapshot(ctx context.Context, r io.Reader, size int64) (*RestoredSnapshot, error) {
	resp, err := a.stream(ctx, http.MethodPost, r, size)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out RestoredSnapshot
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes)).Decode(&out); err != nil {
		return nil, fmt.Errorf("POST /admin/v1/snapshot: decode answer: %w", err)
	}
	return &out, nil
}

// stream sends a request to /admin/v1/snapshot without the client's
// timeout and returns a 2xx answer unread; other answers become *APIError.
func (a *Admin) stream(ctx context.Context, method string, body io.Reader, size int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.t.baseURL+"/admin/v1/snapshot", body)
	if err != nil {
		return nil, fmt.Errorf("make request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+a.t.token)
	if body != nil {
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	hc := *a.t.http
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s /admin/v1/snapshot: %w", method, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		return nil, apiError(resp.StatusCode, data)
	}
	return resp, nil
}
