package admin

import (
	"bytes"
	"encoding/json"
	"strings"

	"lookout/internal/mask"
)

// Secrets of channel configs (a token, a key, a webhook URL that is itself
// the secret: the registry names the field per type) are never answered in
// full after the answer that made them. A read shows them masked; a write
// that sends the masked value back keeps the stored secret, so that a
// client may send back what it read with only the other fields changed.

// maskMark is in every masked value, and a value holding it is taken as
// masked.
const maskMark = mask.Mark

// maskSecret is how secret v is shown (mask.Secret): maskMark and its
// last 4 characters, after the scheme and host when it is a URL.
func maskSecret(v string) string { return mask.Secret(v) }

// secretOf returns the string value of field in the config object (ok
// false when there is none).
func secretOf(config json.RawMessage, field string) (string, bool) {
	var fields map[string]json.RawMessage
	if field == "" || json.Unmarshal(config, &fields) != nil {
		return "", false
	}
	var v string
	if json.Unmarshal(fields[field], &v) != nil || v == "" {
		return "", false
	}
	return v, true
}

// withSecret returns config with field set to v.
func withSecret(config json.RawMessage, field, v string) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(config, &fields); err != nil {
		return nil, err
	}
	s, err := marshal(v)
	if err != nil {
		return nil, err
	}
	fields[field] = s
	return marshal(fields)
}

// maskConfig is config of type typ as answered: its secret masked.
func (a *API) maskConfig(typ string, config json.RawMessage) json.RawMessage {
	field := a.channels.Secret(typ)
	v, ok := secretOf(config, field)
	if !ok {
		return config
	}
	out, err := withSecret(config, field, maskSecret(v))
	if err != nil {
		return config
	}
	return out
}

// keepSecret handles a masked secret in config (of type typ, at path in
// the request): when it is the mask of one of stored (the configs it may
// keep, of that type, the most likely first), the stored secret takes its
// place; a masked value that is no stored secret's mask is refused, so
// that a mask is never stored as a secret.
func (a *API) keepSecret(path, typ string, config json.RawMessage, stored ...json.RawMessage) (json.RawMessage, error) {
	field := a.channels.Secret(typ)
	v, ok := secretOf(bytes.TrimSpace(config), field)
	if !ok || !strings.Contains(v, maskMark) {
		return config, nil
	}
	for _, s := range stored {
		if old, ok := secretOf(s, field); ok && maskSecret(old) == v {
			return withSecret(config, field, old)
		}
	}
	return nil, invalidField(joinPath(path, "config."+field), "a masked value ("+maskMark+") that is not the stored one's: send the secret in full, or the masked value read from this channel to keep it")
}
