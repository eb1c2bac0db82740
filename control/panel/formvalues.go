package panel

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"lookout/internal/manifest"
)

// formValues are the inputs of a form as the page shows them: a stored
// manifest's values, or what was typed. Keys are input names.
type formValues map[string]string

// valuesOf are the form's inputs for a manifest (its JSON form, as the API
// answers it: secrets masked).
func valuesOf(m manifest.Manifest) formValues {
	fields := manifestMap(m)
	v := formValues{}
	for _, f := range fieldsOf(m.Kind) {
		raw, ok := lookup(fields, f.Key)
		if !ok {
			if f.Type == checkField && f.Default != "" {
				v[f.Key] = f.Default
			}
			continue
		}
		switch f.Type {
		case headersField:
			v[f.Key] = headersText(raw)
		case jsonPathField:
			v[f.Key] = jsonPathText(raw)
		case basicAuthField:
			obj, _ := raw.(map[string]any)
			user, _ := obj["username"].(string)
			pw, _ := obj["password"].(string)
			v[f.Key+".username"], v[f.Key+".password"] = user, pw
		case linesField:
			v[f.Key] = strings.Join(items(raw), "\n")
		default:
			v[f.Key] = strings.Join(items(raw), ", ")
		}
	}
	// One region to confirm is the default: shown as empty, so that
	// taking the regions away does not leave a confirm_regions behind.
	if v["confirm_regions"] == "1" {
		delete(v, "confirm_regions")
	}
	return v
}

// items are a JSON value's scalars as text: the value itself, or the
// items of a list (tags, a list of statuses).
func items(raw any) []string {
	list, isList := raw.([]any)
	if !isList {
		list = []any{raw}
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		switch x := x.(type) {
		case string:
			out = append(out, x)
		case bool:
			out = append(out, strconv.FormatBool(x))
		case json.Number:
			out = append(out, x.String())
		}
	}
	return out
}

// postedValues are the form's inputs as submitted, for kind.
func postedValues(kind string, form url.Values) formValues {
	v := formValues{}
	for _, f := range fieldsOf(kind) {
		for _, name := range f.inputs() {
			if s := form.Get(name); s != "" {
				v[name] = s
			}
		}
	}
	return v
}

// manifestJSON lays the form's values over base (the monitor's manifest
// as a JSON object: the stored one when editing, the one duplicated, or
// {manifest_version, kind}), so keys the form does not show are kept as
// they are. errs are the fields whose text cannot be JSON (see
// headersValue, jsonPathValue); such a field holds what could be read.
//
// A browser sends a text area's line breaks as CR LF whatever they were:
// a text that differs from base's only so is base's, so that saving a
// form unchanged changes nothing (a tcp_check's send made with LF through
// the API stays LF); a changed text is taken as sent.
func manifestJSON(base map[string]any, kind string, v formValues) (raw json.RawMessage, errs manifest.Errors) {
	for _, f := range fieldsOf(kind) {
		val, present, problems := f.value(v)
		errs = append(errs, problems...)
		old, had := lookup(base, f.Key)
		switch {
		case !present:
			unset(base, f.Key)
		case had && (f.Type == areaField || f.Type == pemField) && sameText(old, val):
		default:
			set(base, f.Key, val)
		}
	}
	base["kind"] = kind
	b, _ := json.Marshal(base)
	return b, errs
}

// value is the field's JSON value in v; present is false when the key is
// to be left out.
func (f formField) value(v formValues) (val any, present bool, errs manifest.Errors) {
	s := v[f.Key]
	switch f.Type {
	case checkField:
		return s == "true", true, nil
	case areaField:
		return s, s != "" || f.EmptyIsValue, nil
	case pemField:
		return strings.ReplaceAll(s, "\r\n", "\n"), strings.TrimSpace(s) != "", nil
	case headersField:
		h, errs := headersValue(f.Key, s)
		return h, len(h) > 0 || len(errs) > 0, errs
	case jsonPathField:
		list, errs := jsonPathValue(f.Key, s)
		return list, len(list) > 0 || len(errs) > 0, errs
	case basicAuthField:
		user, pw := strings.TrimSpace(v[f.Key+".username"]), v[f.Key+".password"]
		if user == "" && pw == "" {
			return nil, false, nil
		}
		auth := map[string]any{"password": pw}
		if user != "" {
			auth["username"] = user
		}
		return auth, true, nil
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", f.EmptyIsValue, nil
	case f.Type == numberField:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true, nil
		}
		return s, true, nil
	case f.Type == statusField:
		return statusValue(s), true, nil
	case f.Type == listField:
		return splitItems(s, ",\n"), true, nil
	case f.Type == linesField:
		seps := ",\n"
		if strings.EqualFold(v["config.type"], "TXT") {
			seps = "\n"
		}
		return splitItems(s, seps), true, nil
	}
	return s, true, nil
}

// sameText reports whether a and b are the same text but for CR LF and
// LF line breaks.
func sameText(a, b any) bool {
	x, ok1 := a.(string)
	y, ok2 := b.(string)
	return ok1 && ok2 && strings.ReplaceAll(x, "\r\n", "\n") == strings.ReplaceAll(y, "\r\n", "\n")
}

// splitItems splits s at any of seps, without the white space around each
// item or empty ones.
func splitItems(s, seps string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// manifestMap is m as a JSON object, without its read-only uuid. Numbers
// are kept as written (json.Number), so a JSON assertion's value is sent
// back as it was.
func manifestMap(m manifest.Manifest) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	_ = d.Decode(&out)
	delete(out, "uuid")
	return out
}

// lookup reads path ("config.url") of a JSON object.
func lookup(obj map[string]any, path string) (any, bool) {
	head, rest, nested := strings.Cut(path, ".")
	v, ok := obj[head]
	if !ok || !nested {
		return v, ok
	}
	inner, isObj := v.(map[string]any)
	if !isObj {
		return nil, false
	}
	return lookup(inner, rest)
}

// set writes path of a JSON object, making the objects on the way.
func set(obj map[string]any, path string, v any) {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		obj[head] = v
		return
	}
	inner, isObj := obj[head].(map[string]any)
	if !isObj {
		inner = map[string]any{}
		obj[head] = inner
	}
	set(inner, rest, v)
}

// unset removes path of a JSON object.
func unset(obj map[string]any, path string) {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		delete(obj, head)
		return
	}
	if inner, isObj := obj[head].(map[string]any); isObj {
		unset(inner, rest)
	}
}
