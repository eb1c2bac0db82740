package jsonpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Kind is the JSON type of a value found.
type Kind string

// The kinds of value.
const (
	String Kind = "string"
	Number Kind = "number"
	Bool   Kind = "boolean"
	Null   Kind = "null"
	Object Kind = "object"
	Array  Kind = "array"
)

// Value is what Lookup found at a path.
type Value struct {
	// Found is false when the document has no value at the path.
	Found bool
	Kind  Kind
	// Text is the value's JSON text for a scalar (a string quoted as
	// JSON); empty for an object or array.
	Text string
}

// ErrNotJSON wraps every error of a document that is not JSON as far as
// Lookup read it (it may have been cut short).
var ErrNotJSON = errors.New("not JSON")

// Lookup finds the value at p in doc. It reads doc as a stream of tokens,
// descending only along p: a document cut short after the value still
// gives it, and one that is not JSON up to the value is an error
// wrapping ErrNotJSON. Of two members of an object with the same name the
// first counts.
func (p Path) Lookup(doc []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	for _, s := range p.segs {
		tok, err := dec.Token()
		if err != nil {
			return Value{}, notJSON(err)
		}
		d, isDelim := tok.(json.Delim)
		switch {
		case isDelim && d == '{' && !s.isIndex:
			found, err := member(dec, s.name)
			if err != nil || !found {
				return Value{}, err
			}
		case isDelim && d == '[' && s.isIndex:
			found, err := element(dec, s.index)
			if err != nil || !found {
				return Value{}, err
			}
		default:
			return Value{}, nil // no such member or element here
		}
	}
	tok, err := dec.Token()
	if err != nil {
		return Value{}, notJSON(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return Value{Found: true, Kind: Object}, nil
		}
		return Value{Found: true, Kind: Array}, nil
	case string:
		b, _ := json.Marshal(t)
		return Value{Found: true, Kind: String, Text: string(b)}, nil
	case json.Number:
		return Value{Found: true, Kind: Number, Text: t.String()}, nil
	case bool:
		return Value{Found: true, Kind: Bool, Text: fmt.Sprint(t)}, nil
	default:
		return Value{Found: true, Kind: Null, Text: "null"}, nil
	}
}

// member reads the members of an object (after its "{") up to the one
// named name, leaving the decoder before its value.
func member(dec *json.Decoder, name string) (bool, error) {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false, notJSON(err)
		}
		if key, _ := tok.(string); key == name {
			return true, nil
		}
		if err := skip(dec); err != nil {
			return false, err
		}
	}
	return false, nil
}

// element reads the elements of an array (after its "[") up to index i,
// leaving the decoder before it.
func element(dec *json.Decoder, i int) (bool, error) {
	for n := 0; dec.More(); n++ {
		if n == i {
			return true, nil
		}
		if err := skip(dec); err != nil {
			return false, err
		}
	}
	return false, nil
}

// skip reads one whole value.
func skip(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return notJSON(err)
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

func notJSON(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: it ends before the value", ErrNotJSON)
	}
	return fmt.Errorf("%w: %v", ErrNotJSON, err)
}

// Equals reports whether v is the scalar want (JSON text: a string,
// number, true, false or null): strings and literals are compared
// exactly, numbers by value (1, 1.0 and 1e0 are equal). An object, an
// array or a missing value equals nothing.
func (v Value) Equals(want json.RawMessage) bool {
	if !v.Found {
		return false
	}
	w := bytes.TrimSpace(want)
	switch v.Kind {
	case String:
		var a, b string
		return json.Unmarshal([]byte(v.Text), &a) == nil && json.Unmarshal(w, &b) == nil && len(w) > 0 && w[0] == '"' && a == b
	case Number:
		return numbersEqual(v.Text, string(w))
	case Bool, Null:
		return string(w) == v.Text
	}
	return false
}

// numbersEqual compares two JSON numbers: as integers when both are
// (exactly, at any size up to int64), else as float64 values. (No
// arbitrary precision: an exponent from a target's answer must not cost
// more than a float parse.)
func numbersEqual(a, b string) bool {
	if !json.Valid([]byte(b)) {
		return false
	}
	if x, err := strconv.ParseInt(a, 10, 64); err == nil {
		if y, err := strconv.ParseInt(b, 10, 64); err == nil {
			return x == y
		}
	}
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

// Describe names v for a message: its JSON text (cut to about 64
// characters), "an object", "an array", or "missing".
func (v Value) Describe() string {
	switch {
	case !v.Found:
		return "missing"
	case v.Kind == Object:
		return "an object"
	case v.Kind == Array:
		return "an array"
	}
	return Excerpt(v.Text)
}

// Excerpt shortens a JSON text to about 64 characters for a message.
func Excerpt(s string) string {
	if utf8.RuneCountInString(s) <= 64 {
		return s
	}
	return string([]rune(s)[:61]) + "..."
}
