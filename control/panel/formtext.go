package panel

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"lookout/internal/manifest"
)

// The fields typed as lines of text: headers ("Name: value") and JSON
// assertions ("path = value"), and expected_status ("200, 3xx"). Each
// line becomes an entry of the manifest as it is typed; whether the entry
// is valid is the API's to say. A line that cannot be an entry at all is
// the panel's problem, reported with the code the API gives the field,
// and never quoted (a header line may be a secret).

// headersText is a headers object as the form shows it: "Name: value"
// lines in name order (secret values masked, as the manifest holds them).
func headersText(raw any) string {
	obj, _ := raw.(map[string]any)
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	lines := make([]string, 0, len(names))
	for _, name := range names {
		value, _ := obj[name].(string)
		lines = append(lines, name+": "+value)
	}
	return strings.Join(lines, "\n")
}

// headersValue reads "Name: value" lines (blank lines skipped) into a
// headers object. A line without a colon or without a name, and a name
// given twice, are errors of key.
func headersValue(key, s string) (map[string]any, manifest.Errors) {
	out := map[string]any{}
	var errs manifest.Errors
	for i, line := range lines(s) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		_, dup := out[name]
		switch {
		case !ok || name == "":
			errs = append(errs, lineError(key, manifest.CodeHeaderInvalid, i, "is not a header: write Name: value, the name, a colon, then the value"))
		case dup:
			errs = append(errs, lineError(key, manifest.CodeHeaderInvalid, i, "repeats the header "+strconv.Quote(name)))
		default:
			out[name] = strings.TrimSpace(value)
		}
	}
	return out, errs
}

// jsonPathText is a json_path list as the form shows it: "path = value"
// lines, the value as JSON.
func jsonPathText(raw any) string {
	list, _ := raw.([]any)
	lines := make([]string, 0, len(list))
	for _, x := range list {
		a, _ := x.(map[string]any)
		path, _ := a["path"].(string)
		lines = append(lines, path+" = "+jsonText(a["equals"]))
	}
	return strings.Join(lines, "\n")
}

// jsonText is v as compact JSON, without the HTML escapes of
// json.Marshal (a value is shown as it was written).
func jsonText(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonPathValue reads "path = value" lines (blank lines skipped) into
// json_path assertions. A line without an = outside the path's brackets,
// and a value that is not JSON, are errors of key.
func jsonPathValue(key, s string) ([]any, manifest.Errors) {
	out := []any{}
	var errs manifest.Errors
	for i, line := range lines(s) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		path, value, ok := splitAssertion(line)
		value = strings.TrimSpace(value)
		switch {
		case !ok:
			errs = append(errs, lineError(key, manifest.CodeJSONPathInvalid, i, `is not an assertion: write path = value, such as $.status = "ok"`))
		case !json.Valid([]byte(value)):
			errs = append(errs, lineError(key, manifest.CodeJSONPathInvalid, i,
				`has a value that is not JSON: write a text in double quotes ("ok"), a number, true, false or null`))
		default:
			out = append(out, map[string]any{"path": strings.TrimSpace(path), "equals": json.RawMessage(value)})
		}
	}
	return out, errs
}

// splitAssertion cuts "path = value" at the first = outside the path's
// brackets, so that $['a=b'] = 1 is the path $['a=b'].
func splitAssertion(line string) (path, value string, ok bool) {
	depth := 0
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case depth > 0 && (c == '\'' || c == '"'):
			quote = c
		case c == '[':
			depth++
		case c == ']' && depth > 0:
			depth--
		case c == '=' && depth == 0:
			return line[:i], line[i+1:], true
		}
	}
	return "", "", false
}

// statusValue is expected_status as typed ("200", "2xx", "200, 3xx"): one
// item or a list; an item is an integer when it reads as one, else the
// string typed, for the API to judge.
func statusValue(s string) any {
	parts := splitItems(s, ", \t")
	list := make([]any, 0, len(parts))
	for _, p := range parts {
		if n, err := strconv.ParseInt(p, 10, 64); err == nil {
			list = append(list, n)
		} else {
			list = append(list, p)
		}
	}
	if len(list) == 1 {
		return list[0]
	}
	return list
}

// lines splits a text area's text into its lines (a browser sends CR LF).
func lines(s string) []string {
	return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
}

// lineError is the problem of line i (from 0) of field key.
func lineError(key, code string, i int, what string) manifest.Error {
	return manifest.Error{Field: key, Code: code, Message: key + " line " + strconv.Itoa(i+1) + " " + what}
}
