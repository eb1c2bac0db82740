package pingwire

import (
	"errors"
	"net/http"
	"strings"

	"lookout/internal/apikey"
)

// ErrUnauthorized is a missing, malformed or invalid key.
var ErrUnauthorized = errors.New("unauthorized")

// SecretOf returns the key a request carries: the
// Authorization header when the request has one, else the api_key query
// parameter (on GET and POST). A header that is present but not
// "Bearer <token>" is refused: the query parameter is then never looked at.
func SecretOf(r *http.Request) (string, error) {
	token, present, err := apikey.BearerToken(r)
	if err != nil {
		return "", ErrUnauthorized
	}
	if present {
		return token, nil
	}
	if secret := r.URL.Query().Get("api_key"); secret != "" {
		return secret, nil
	}
	return "", ErrUnauthorized
}

// IngestSecretHash returns the hash of the ingest key (ck_) r carries, the
// form keys are looked up by, or ErrUnauthorized when it carries none or
// another kind of key.
func IngestSecretHash(r *http.Request) ([]byte, error) {
	secret, err := SecretOf(r)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(secret, apikey.Ingest) {
		return nil, ErrUnauthorized
	}
	return apikey.Hash(secret), nil
}

// IsMonitorPath tells whether path is /ping/ followed by one segment.
func IsMonitorPath(path string) bool {
	rest, ok := strings.CutPrefix(path, "/ping/")
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// HandleOther answers a request under /ping that matches no endpoint of
// the Ingest API: GET /ping/ (an empty monitor) goes to get, which answers
// it as a missing monitor; a wrong method is 405 with Allow; the rest 404.
func HandleOther(w http.ResponseWriter, r *http.Request, get http.HandlerFunc) {
	switch {
	case r.URL.Path == "/ping/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		get(w, r)
	case r.URL.Path == "/ping":
		w.Header().Set("Allow", http.MethodPost)
		WriteError(w, http.StatusMethodNotAllowed, "method not allowed")
	case r.Method != http.MethodGet && r.Method != http.MethodHead && IsMonitorPath(r.URL.Path):
		w.Header().Set("Allow", "GET, HEAD")
		WriteError(w, http.StatusMethodNotAllowed, "method not allowed")
	default:
		WriteError(w, http.StatusNotFound, "not found")
	}
}
