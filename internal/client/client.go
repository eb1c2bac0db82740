// Package client is a Go client for Lookout's HTTP APIs. Admin calls the
// operator API (/admin/v1); the `lookout admin` commands and the tests use
// it.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// defaultTimeout bounds a request when no *http.Client is given.
const defaultTimeout = 30 * time.Second

// maxResponseBytes bounds the body of an answer that is read.
const maxResponseBytes = 16 << 20

// APIError is an answer of the API other than 2xx.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Code is the stable error code of the body ("not_found",
	// "invalid_request", ...), empty when the body had none.
	Code string
	// Message is the body's message, for people.
	Message string
}

func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// transport sends JSON requests with a bearer token; the clients of each
// API share it.
type transport struct {
	baseURL string
	token   string
	http    *http.Client
}

func newTransport(baseURL, token string, httpClient *http.Client) transport {
	if httpClient == nil {
		httpClient = &http.Client{Timeout: defaultTimeout}
	}
	return transport{baseURL: strings.TrimRight(baseURL, "/"), token: token, http: httpClient}
}

// do sends in (when not nil) as JSON to path and decodes a 2xx answer into
// out (when not nil). Other answers become *APIError.
func (t transport) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.baseURL+path, body)
	if err != nil {
		return fmt.Errorf("make request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := t.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return apiError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// apiError reads an error body. It accepts the shapes of every Lookout API:
// {"message", "code"}, {"message", "error_code"} and {"error"}.
func apiError(status int, data []byte) *APIError {
	var b struct {
		Message   string `json:"message"`
		Code      string `json:"code"`
		ErrorCode string `json:"error_code"`
		Error     string `json:"error"`
	}
	e := &APIError{Status: status}
	if json.Unmarshal(data, &b) != nil {
		e.Message = strings.TrimSpace(string(data))
		if e.Message == "" {
			e.Message = http.StatusText(status)
		}
		return e
	}
	e.Code, e.Message = b.Code, b.Message
	if e.Code == "" {
		e.Code = b.ErrorCode
	}
	if e.Message == "" {
		e.Message = b.Error
	}
	return e
}
