package apikey

import (
	"errors"
	"net/http"
	"strings"
)

// ErrMalformed is an Authorization header that is not exactly one
// "Bearer <token>".
var ErrMalformed = errors.New("malformed Authorization header")

// BearerToken returns the token of the request's Authorization header
// (Authorization: Bearer <key>) and whether the request has the header at all. The
// scheme is case-insensitive (RFC 9110 section 11.1); the header must be
// there once, as "<scheme> <token>" with a non-empty token without
// blanks, else the error is ErrMalformed.
func BearerToken(r *http.Request) (token string, present bool, err error) {
	values, present := r.Header["Authorization"]
	if !present {
		return "", false, nil
	}
	if len(values) != 1 {
		return "", true, ErrMalformed
	}
	scheme, token, found := strings.Cut(values[0], " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", true, ErrMalformed
	}
	return token, true, nil
}
