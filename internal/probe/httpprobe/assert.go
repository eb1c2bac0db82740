package httpprobe

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"lookout/internal/jsonpath"
	"lookout/internal/probe"
)

// assert checks the final answer. A wrong status fails at once (the body
// of an error page is not worth judging); otherwise every other assertion
// is judged, and the error names each that failed, in the order of the
// config: the response time against max_response_ms, the expected and
// the absent content, then each json_path assertion. Its kind is the
// first failure's.
func assert(t probe.Target, status int, took time.Duration, head []byte) *probe.Error {
	if e := assertStatus(t, status); e != nil {
		return e
	}
	var failed []*probe.Error
	if t.MaxResponse > 0 && took > t.MaxResponse {
		failed = append(failed, &probe.Error{Kind: probe.KindTooSlow,
			Message: fmt.Sprintf("answered in %s, limit %s", probe.Millis(took), probe.Millis(t.MaxResponse))})
	}
	if t.ExpectedContent != "" && !bytes.Contains(head, []byte(t.ExpectedContent)) {
		failed = append(failed, &probe.Error{Kind: probe.KindContent,
			Message: fmt.Sprintf("the expected content is not in the first %s bytes of the body", probe.Count(MaxContentSearch))})
	}
	if t.ContentAbsent != "" && bytes.Contains(head, []byte(t.ContentAbsent)) {
		failed = append(failed, &probe.Error{Kind: probe.KindContentPresent,
			Message: fmt.Sprintf("the body contains %s, which must be absent", jsonpath.Excerpt(strconv.Quote(t.ContentAbsent)))})
	}
	for _, a := range t.JSONPath {
		if e := assertJSON(a, head); e != nil {
			failed = append(failed, e)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	msgs := make([]string, len(failed))
	for i, e := range failed {
		msgs[i] = e.Message
	}
	return &probe.Error{Kind: failed[0].Kind, Message: strings.Join(msgs, "; ")}
}

// assertStatus checks the status against the expected one, the expected
// list, or else any 2xx or 3xx. A 5xx that is not expected is transient.
func assertStatus(t probe.Target, status int) *probe.Error {
	want := "2xx or 3xx"
	ok := status >= 200 && status <= 399
	switch {
	case t.ExpectedStatus != 0:
		want, ok = strconv.Itoa(t.ExpectedStatus), status == t.ExpectedStatus
	case len(t.ExpectedStatuses) > 0:
		want, ok = orList(t.ExpectedStatuses), StatusMatches(t.ExpectedStatuses, status)
	}
	if ok {
		return nil
	}
	return &probe.Error{Kind: probe.KindStatus, Transient: status >= 500 && status <= 599,
		Message: fmt.Sprintf("the status is %d, expected %s", status, want)}
}

// StatusMatches reports whether status is one of list: a status ("204")
// or a class ("2xx": 200 to 299).
func StatusMatches(list []string, status int) bool {
	s := strconv.Itoa(status)
	for _, want := range list {
		if want == s || len(want) == 3 && strings.HasSuffix(want, "xx") && want[0] == s[0] && len(s) == 3 {
			return true
		}
	}
	return false
}

// orList writes "a", "a or b", "a, b or c".
func orList(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// assertJSON judges one json_path assertion on the body's first bytes:
// `$.status was "degraded", expected "ok"`.
func assertJSON(a probe.JSONAssertion, head []byte) *probe.Error {
	fail := func(format string, args ...any) *probe.Error {
		return &probe.Error{Kind: probe.KindJSONPath, Message: fmt.Sprintf(format, args...)}
	}
	p, err := jsonpath.Parse(a.Path)
	if err != nil {
		return fail("%s: the path %v", a.Path, err)
	}
	v, err := p.Lookup(head)
	switch {
	case errors.Is(err, jsonpath.ErrNotJSON):
		return fail("%s: the body is not JSON within its first %s bytes (%v)", a.Path, probe.Count(MaxContentSearch),
			strings.TrimPrefix(err.Error(), jsonpath.ErrNotJSON.Error()+": "))
	case err != nil:
		return fail("%s: %v", a.Path, err)
	case !v.Found:
		return fail("%s is missing, expected %s", a.Path, jsonpath.Excerpt(a.Equals))
	case !v.Equals([]byte(a.Equals)):
		return fail("%s was %s, expected %s", a.Path, v.Describe(), jsonpath.Excerpt(a.Equals))
	}
	return nil
}
