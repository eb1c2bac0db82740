package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// decoder reads the fields of one JSON object one by one, so that a field of the wrong
// type is reported with that field's own code instead of failing the whole document.
// JSON null reads as an absent key.
type decoder struct {
	prefix    string // "" for the manifest, "config." inside config
	fields    map[string]json.RawMessage
	notObject bool // the object itself had the wrong type; every key reads as absent
	errs      *Errors
}

// isNull reports whether raw is the JSON literal null.
func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// raw returns the value of key, and false when it is absent or null.
func (d *decoder) raw(key string) (json.RawMessage, bool) {
	r, ok := d.fields[key]
	if !ok || isNull(r) {
		return nil, false
	}
	return r, true
}

// has reports whether key is present and not null.
func (d *decoder) has(key string) bool {
	_, ok := d.raw(key)
	return ok
}

// add records a problem with key; the message starts with the field's path.
func (d *decoder) add(key, code, format string, args ...any) {
	path := d.prefix + key
	*d.errs = append(*d.errs, Error{Field: path, Code: code, Message: path + " " + fmt.Sprintf(format, args...)})
}

// failed reports whether a problem with key was recorded.
func (d *decoder) failed(key string) bool {
	for _, e := range *d.errs {
		if e.Field == d.prefix+key {
			return true
		}
	}
	return false
}

// missing records that a required key is absent.
func (d *decoder) missing(key, code, what string) {
	if d.notObject {
		d.add(key, code, "is required (%s); %s must be an object", what, d.prefix[:len(d.prefix)-1])
		return
	}
	d.add(key, code, "is required (%s)", what)
}

// str decodes a string. ok is false when the key is absent, or of the wrong type, which
// is recorded with code.
func (d *decoder) str(key, code string) (s string, ok bool) {
	r, present := d.raw(key)
	if !present {
		return "", false
	}
	if err := json.Unmarshal(r, &s); err != nil {
		d.add(key, code, "must be a string, got %s", excerpt(r))
		return "", false
	}
	return s, true
}

// integer decodes an integer in [lo, hi]. A missing required key, a value of the wrong
// type and a value out of range are recorded with code.
func (d *decoder) integer(key string, lo, hi int64, code string, required bool) (int64, bool) {
	r, present := d.raw(key)
	if !present {
		if required {
			d.missing(key, code, fmt.Sprintf("an integer from %d to %d", lo, hi))
		}
		return 0, false
	}
	n, ok := parseInt(r)
	if !ok || n < lo || n > hi {
		d.add(key, code, "must be an integer from %d to %d, got %s", lo, hi, excerpt(r))
		return 0, false
	}
	return n, true
}

// parseInt reads a JSON number with an integral value (10, 10.0 and 1e1 alike).
func parseInt(r json.RawMessage) (int64, bool) {
	s := string(bytes.TrimSpace(r))
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return 0, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// strings decodes an array of strings; a wrong type is recorded with code.
func (d *decoder) strings(key, code string) ([]string, bool) {
	r, present := d.raw(key)
	if !present {
		return nil, false
	}
	var out []string
	if err := json.Unmarshal(r, &out); err != nil {
		d.add(key, code, "must be an array of strings, got %s", excerpt(r))
		return nil, false
	}
	return out, true
}

// object returns a decoder over the object at key. A missing key, null or a value of the
// wrong type gives a decoder whose keys all read as absent; a wrong type is marked so that
// the required keys inside say why they are missing.
func (d *decoder) object(key string) *decoder {
	sub := &decoder{prefix: d.prefix + key + ".", fields: map[string]json.RawMessage{}, errs: d.errs}
	r, present := d.raw(key)
	if !present {
		return sub
	}
	if err := json.Unmarshal(r, &sub.fields); err != nil || sub.fields == nil {
		sub.fields = map[string]json.RawMessage{}
		sub.notObject = true
	}
	return sub
}

// excerpt quotes a raw value for a message, shortened to a readable length.
func excerpt(r json.RawMessage) string {
	s := string(bytes.TrimSpace(r))
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "..."
	}
	return s
}

// runes returns the length of s in characters.
func runes(s string) int {
	return utf8.RuneCountInString(s)
}
