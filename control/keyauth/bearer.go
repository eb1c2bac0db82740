// Package keyauth is what the Ingest and Management APIs share to
// authenticate an API key: reading the bearer token of a request, and
// looking a key up by its hash so that a key this node does not know yet
// is checked against the leader's state before it is refused.
package keyauth

import (
	"net/http"

	"lookout/internal/apikey"
)

// ErrMalformed is an Authorization header that is not exactly one
// "Bearer <token>" (apikey.ErrMalformed).
var ErrMalformed = apikey.ErrMalformed

// BearerToken returns the token of the request's Authorization header
// (Authorization: Bearer <key>) and whether the request has the header at all; see
// apikey.BearerToken, which the edge agent shares.
func BearerToken(r *http.Request) (token string, present bool, err error) {
	return apikey.BearerToken(r)
}
