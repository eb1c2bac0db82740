package pagerduty

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"

	"lookout/control/alert/channel"
)

// decode reads config, a JSON object, into dst, a pointer to a struct
// with json tags. Keys are matched exactly (encoding/json alone would
// accept "Routing_Key"); an unknown key or a value of the wrong type is
// an error naming the field. An empty or null config is an empty object,
// so the caller reports the missing fields.
func decode(config json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(config)) == 0 {
		config = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(config, &fields); err != nil {
		return fmt.Errorf("%w: not a JSON object", channel.ErrInvalidConfig)
	}
	known := map[string]bool{}
	t := reflect.TypeOf(dst).Elem()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		known[name] = true
	}
	for name := range fields {
		if !known[name] {
			return invalid(name, "unknown field")
		}
	}
	if err := json.Unmarshal(config, dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return invalid(typeErr.Field, "must be a JSON %s", jsonKind(typeErr.Type.Kind()))
		}
		return fmt.Errorf("%w: %v", channel.ErrInvalidConfig, err)
	}
	return nil
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

// invalid is a config error about field; it reads
// "invalid channel config: invalid field: <field>: <why>", like the
// errors of the other channels.
func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: invalid field: %s: %s", channel.ErrInvalidConfig, field, fmt.Sprintf(format, args...))
}

// baseURL checks the api_url field, which replaces def (the receiver's
// public address) when set. It returns the address without a trailing
// slash.
func baseURL(apiURL, def string) (string, error) {
	if apiURL == "" {
		return def, nil
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", invalid("api_url", "must be an absolute http or https URL")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", invalid("api_url", "must not have a query or fragment")
	}
	return strings.TrimRight(apiURL, "/"), nil
}
