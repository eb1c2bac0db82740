package channel

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
)

// ConfigError is a channel config that cannot be used. It wraps
// ErrInvalidConfig and reads "invalid channel config: invalid field:
// <field>: <reason>", or "invalid channel config: <reason>" when the
// problem is not one field's (a config that is not an object, an
// operator setting that is missing). The operator and management APIs
// name Field in their 400 answers.
type ConfigError struct {
	// Field is the config field at fault, "" when none is.
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	if e.Field == "" {
		return ErrInvalidConfig.Error() + ": " + e.Reason
	}
	return ErrInvalidConfig.Error() + ": invalid field: " + e.Field + ": " + e.Reason
}

// Unwrap makes errors.Is(err, ErrInvalidConfig) hold.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// FieldError is a ConfigError about field; the reason is formatted as
// by fmt.Sprintf.
func FieldError(field, format string, args ...any) error {
	return &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// InvalidConfig is a ConfigError about no single field.
func InvalidConfig(format string, args ...any) error {
	return &ConfigError{Reason: fmt.Sprintf(format, args...)}
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
		return InvalidConfig("not a JSON object")
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
			return FieldError(te.Field, "must be a JSON %s", jsonKind(te.Type.Kind()))
		}
		return InvalidConfig("%v", err)
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

// jsonKind names a Go kind the way JSON does.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	default:
		return "number"
	}
}

// ParseURL checks that raw, the value of field, is present and an
// absolute http or https URL with a host.
func ParseURL(field, raw string) (*url.URL, error) {
	if raw == "" {
		return nil, FieldError(field, "is required")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, FieldError(field, "must be an absolute http or https URL")
	}
	return u, nil
}

// parseAPIURL checks the api_url field every channel type takes: an
// absolute http(s) URL without query or fragment.
func parseAPIURL(apiURL string) (*url.URL, error) {
	u, err := ParseURL("api_url", apiURL)
	if err != nil {
		return nil, err
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, FieldError("api_url", "must not have a query or fragment")
	}
	return u, nil
}

// BaseURL returns the address of a receiver whose public address is def
// (for example https://events.pagerduty.com): apiURL when it is set and
// valid, without trailing slashes, else def.
func BaseURL(apiURL, def string) (string, error) {
	if apiURL == "" {
		return def, nil
	}
	if _, err := parseAPIURL(apiURL); err != nil {
		return "", err
	}
	return strings.TrimRight(apiURL, "/"), nil
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
	base, err := parseAPIURL(apiURL)
	if err != nil {
		return "", err
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
