// Package mask is how a secret is shown once it has been stored: the
// operator API's channel configs and the audit log's diffs show secrets
// this way, so that people can tell two secrets apart without reading
// either.
package mask

import (
	"net/url"
	"sort"
)

// Mark is in every masked value; a value holding it is taken as masked.
const Mark = "****"

// Secret is how secret v is shown: Mark and its last 4 characters (none
// when it is shorter than 12), after the scheme and host when it is a URL.
func Secret(v string) string {
	tail := ""
	if r := []rune(v); len(r) >= 12 {
		tail = string(r[len(r)-4:])
	}
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
		return u.Scheme + "://" + u.Host + "/" + Mark + tail
	}
	return Mark + tail
}

// JSON masks every string of a decoded JSON value (as encoding/json
// decodes into any): strings become Secret of themselves, at any depth;
// numbers, booleans and null stay. It is for configs whose secret fields
// the caller cannot name: nothing of a string is shown but what Secret
// shows.
func JSON(v any) any {
	switch v := v.(type) {
	case string:
		return Secret(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = JSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out[k] = JSON(v[k])
		}
		return out
	}
	return v
}
