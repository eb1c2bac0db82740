// Package pingwire is the wire side of the Ingest API that the control
// plane (control/ingest) and the edge agent (agent/ingest) share, so that
// both give the same answers to the same request: the key a request
// carries, the parsing and validation of an event (docs/api.md, Ingest
// API), the per-key rate limit, the timestamp bounds, the
// X-Quota-* headers and the JSON bodies of the answers.
//
// Validation errors are *RequestError values: the status and the message
// of the {"error": ...} body. Nothing here knows where events go.
package pingwire
