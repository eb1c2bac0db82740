package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"lookout/control/alert/channel"
)

// FieldError is a config error about one field: it wraps
// channel.ErrInvalidConfig and reads "invalid field: <field>: <why>".
func FieldError(field, why string) error {
	return fmt.Errorf("%w: invalid field: %s: %s", channel.ErrInvalidConfig, field, why)
}

// DecodeConfig decodes the JSON object raw into v, a pointer to a struct
// with json tags. A key v has no field for (compared exactly, not the
// case-insensitive way of encoding/json) and a value of the wrong type
// are FieldErrors. An empty or null raw is an empty object, so that
// required fields are reported missing by the caller.
func DecodeConfig(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("%w: not a JSON object", channel.ErrInvalidConfig)
	}
	known := jsonNames(v)
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if !known[name] {
			return FieldError(name, "unknown field")
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return FieldError(te.Field, "must be a "+te.Type.Kind().String())
		}
		return fmt.Errorf("%w: %v", channel.ErrInvalidConfig, err)
	}
	return nil
}

// jsonNames returns the JSON names of the fields of the struct v points
// to.
func jsonNames(v any) map[string]bool {
	t := reflect.TypeOf(v).Elem()
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
}

// ParseURL checks that raw, the value of field, is present and an
// absolute http or https URL with a host.
func ParseURL(field, raw string) (*url.URL, error) {
	if raw == "" {
		return nil, FieldError(field, "required")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, FieldError(field, "must be an absolute http or https URL")
	}
	return u, nil
}

// Endpoint returns the address to POST to for a channel configured with
// the full URL rawURL (in config field field) and the optional api_url.
//
// rawURL must be an absolute http(s) URL. When apiURL is set it must be
// an absolute http(s) URL without query or fragment; it replaces the
// receiver's public address: its scheme, host (with port) and user
// info take the place of rawURL's, and its path, if any, goes in front
// of rawURL's path; rawURL's query is kept. For example
// https://hooks.slack.com/services/T/B/X?a=1 with api_url
// http://127.0.0.1:8080/proxy becomes
// http://127.0.0.1:8080/proxy/services/T/B/X?a=1. Fragments are
// dropped.
func Endpoint(field, rawURL, apiURL string) (string, error) {
	u, err := ParseURL(field, rawURL)
	if err != nil {
		return "", err
	}
	u.Fragment, u.RawFragment = "", ""
	if apiURL == "" {
		return u.String(), nil
	}
	base, err := ParseURL("api_url", apiURL)
	if err != nil {
		return "", err
	}
	if base.RawQuery != "" || base.ForceQuery || base.Fragment != "" {
		return "", FieldError("api_url", "must not have a query or fragment")
	}
	out := *base
	out.Path = strings.TrimSuffix(base.Path, "/") + u.Path
	out.RawPath = ""
	if base.RawPath != "" || u.RawPath != "" {
		out.RawPath = strings.TrimSuffix(base.EscapedPath(), "/") + u.EscapedPath()
	}
	out.RawQuery = u.RawQuery
	return out.String(), nil
}
