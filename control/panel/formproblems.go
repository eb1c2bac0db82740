package panel

import (
	"encoding/json"
	"strings"

	"lookout/internal/manifest"
)

// problem is one of the API's errors, as the form shows it.
type problem struct {
	Code, Message string
}

// fieldProblems sorts the API's errors by the form's fields: problems[key]
// are shown next to that field (without the field's path the message
// starts with), general ones above the form. An error about a key inside
// a field's object (config.basic_auth.password) is that field's.
func fieldProblems(kind string, errs manifest.Errors) (problems map[string][]problem, general []problem) {
	problems = map[string][]problem{}
	for _, e := range errs {
		key, ok := fieldOf(kind, e.Field)
		if !ok {
			general = append(general, problem{e.Code, e.Message})
			continue
		}
		msg := strings.TrimPrefix(e.Message, key+" ")
		if msg == e.Message {
			msg = strings.TrimPrefix(e.Message, key+".")
		}
		problems[key] = append(problems[key], problem{e.Code, msg})
	}
	return problems, general
}

// fieldOf is the key of the form field of kind that the error about path
// is shown next to: the field itself, or the field whose object holds it.
func fieldOf(kind, path string) (string, bool) {
	if path == "" {
		return "", false
	}
	for _, f := range fieldsOf(kind) {
		if path == f.Key || strings.HasPrefix(path, f.Key+".") {
			return f.Key, true
		}
	}
	return "", false
}

// withAPIProblems adds to errs, the panel's problems with text it could
// not turn into JSON, what the Management API's validation (the same
// code as a create's) finds in the rest of raw, so that a refused form
// shows every problem at once. A field the panel already refused is not
// judged again: it holds only what could be read.
func withAPIProblems(kind string, raw json.RawMessage, errs manifest.Errors) manifest.Errors {
	refused := map[string]bool{}
	for _, e := range errs {
		refused[e.Field] = true
	}
	_, found := manifest.Parse(raw, manifest.Options{})
	for _, e := range found {
		if key, ok := fieldOf(kind, e.Field); !ok || !refused[key] {
			errs = append(errs, e)
		}
	}
	return errs
}
