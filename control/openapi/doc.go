// Package openapi serves the OpenAPI 3.1 description of a control node's
// HTTP APIs at GET /openapi.json: the Ingest API (/ping, /ping/{monitor},
// /health), the Management API (/api/v1) and the operator API (/admin/v1).
//
// The document, openapi.json, is a source file written by hand from the
// contract docs/api.md describes, not generated from the handlers: it says what the service
// promises, and the package's tests drive every endpoint the handlers
// serve and check each real request and answer against it, so the two
// cannot drift apart unnoticed. An endpoint of the document that no
// handler serves yet is listed in the tests' notYetServed set until it
// lands.
package openapi

import (
	_ "embed"
	"net/http"
	"strconv"
)

// document is openapi.json, embedded at build time.
//
//go:embed openapi.json
var document []byte

// Document returns a copy of the OpenAPI document.
func Document() []byte { return append([]byte(nil), document...) }

// Handler serves the document: GET /openapi.json, no authentication.
// Register it with mux.Handle("GET /openapi.json", openapi.Handler()).
func Handler() http.Handler {
	length := strconv.Itoa(len(document))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("Content-Length", length)
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			// The status line is out; a write error can only be a broken
			// connection, which the client sees.
			_, _ = w.Write(document)
		}
	})
}
