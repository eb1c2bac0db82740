package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"lookout/internal/names"
)

// maxBodyBytes bounds a request body; larger bodies are answered 413.
const maxBodyBytes = 1 << 20

// decodeBody reads r's body, which must be one JSON object, into dst.
func decodeBody(w http.ResponseWriter, r *http.Request, dst any) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: codeTooLarge, Message: "request body is larger than 1 MiB"}
	}
	if err != nil {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidJSON, Message: "could not read the request body"}
	}
	return decodeObject(data, dst, "")
}

// decodeObject decodes data, which must be one JSON object, into dst,
// refusing unknown fields. path names the object in error messages ("" for
// the request body, "plan" for a nested plan).
func decodeObject(data []byte, dst any, path string) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		if path == "" {
			return &Error{Status: http.StatusBadRequest, Code: codeInvalidJSON, Message: "invalid JSON: the request body must be a JSON object"}
		}
		return invalidField(path, "must be an object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err, path)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Status: http.StatusBadRequest, Code: codeInvalidJSON, Message: "invalid JSON: data after the object"}
	}
	return nil
}

// decodeError turns an encoding/json error into the matching 400.
func decodeError(err error, path string) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return invalidField(joinPath(path, typeErr.Field), "must be "+jsonKind(typeErr.Type))
	}
	// encoding/json has no type for this error; its text is stable.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if unquoted, uerr := strconv.Unquote(name); uerr == nil {
			name = unquoted
		}
		return invalidField(joinPath(path, name), "unknown field")
	}
	return &Error{Status: http.StatusBadRequest, Code: codeInvalidJSON, Message: "invalid JSON: " + err.Error()}
}

// joinPath names field name of the object at path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// jsonKind names, for people, the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// checkName checks a required name of 1 to max characters that obeys
// the rule of every name people see (internal/names): printable, no
// bidirectional formatting characters, not blank.
func checkName(field, value string, max int) error {
	n := utf8.RuneCountInString(value)
	if n == 0 || strings.TrimSpace(value) == "" {
		return invalidField(field, "required")
	}
	if n > max {
		return invalidField(field, "at most "+strconv.Itoa(max)+" characters")
	}
	if err := names.Check(value); err != nil {
		return invalidField(field, err.Error())
	}
	return nil
}
