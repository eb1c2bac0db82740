package jsonpath

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, canonical string
		segs          int
	}{
		{"$", "$", 0},
		{"$.status", "$.status", 1},
		{"$.a.b[0].c", "$.a.b[0].c", 4},
		{"$['a.b']", "$['a.b']", 1},
		{`$["it's"]`, `$['it\'s']`, 1},
		{`$['back\\slash']`, `$['back\\slash']`, 1},
		{"$['']", "$['']", 1},
		{"$.état[12]", "$.état[12]", 2},
		{"$[0][1]", "$[0][1]", 2},
		{"$.a-b_c", "$.a-b_c", 1},
	} {
		p, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		if p.String() != tc.canonical || p.Len() != tc.segs {
			t.Errorf("Parse(%q) = %q with %d segments, want %q with %d", tc.in, p.String(), p.Len(), tc.canonical, tc.segs)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{
		"", "status", ".status", "$.", "$..a", "$.a.", "$[", "$[]", "$[-1]", "$[+1]", "$[01]", "$[1.5]",
		"$[1000000000]", "$[*]", "$.*", "$[?@.a]", "$['a'", "$['a']x", "$['a\nb']", "$.a b", "$a",
		"$.\x00", "$\xff", "$" + strings.Repeat(".a", MaxSegments+1), "$." + strings.Repeat("a", MaxLen),
	} {
		if p, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %q, want an error", in, p.String())
		}
	}
}

const doc = `{"status": "degraded", "ok": true, "count": 3, "ratio": 0.5, "none": null,
	"checks": [{"name": "db", "up": false}, {"name": "cache", "up": true}],
	"a.b": "dotted", "nested": {"deep": {"x": [1, [2, 3]]}}, "dup": 1, "dup": 2}`

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		path string
		want Value
	}{
		{"$.status", Value{true, String, `"degraded"`}},
		{"$.ok", Value{true, Bool, "true"}},
		{"$.count", Value{true, Number, "3"}},
		{"$.none", Value{true, Null, "null"}},
		{"$.checks[1].name", Value{true, String, `"cache"`}},
		{"$.checks[0].up", Value{true, Bool, "false"}},
		{"$.checks", Value{true, Array, ""}},
		{"$.nested.deep", Value{true, Object, ""}},
		{"$.nested.deep.x[1][0]", Value{true, Number, "2"}},
		{"$['a.b']", Value{true, String, `"dotted"`}},
		{"$.dup", Value{true, Number, "1"}},
		{"$", Value{true, Object, ""}},
		{"$.missing", Value{}},
		{"$.checks[2]", Value{}},
		{"$.status.inner", Value{}},
		{"$.checks.name", Value{}},
		{"$[0]", Value{}},
	} {
		p, err := Parse(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Lookup([]byte(doc))
		if err != nil || got != tc.want {
			t.Errorf("Lookup(%s) = %+v, %v; want %+v", tc.path, got, err, tc.want)
		}
	}
}

func TestLookupReadsOnlyUpToTheValue(t *testing.T) {
	p, _ := Parse("$.status")
	// Cut short after the value (a capped body): the value is there.
	got, err := p.Lookup([]byte(`{"status": "ok", "rest": [1, 2, 3`))
	if err != nil || !got.Equals(json.RawMessage(`"ok"`)) {
		t.Fatalf("cut after the value: %+v, %v", got, err)
	}
	// Cut short before it, or not JSON at all: an error.
	for _, in := range []string{`{"rest": [1, 2, 3`, `<html>`, ``, `{"a" 1}`} {
		if _, err := p.Lookup([]byte(in)); !errors.Is(err, ErrNotJSON) {
			t.Errorf("Lookup(%q) error = %v, want ErrNotJSON", in, err)
		}
	}
}

func TestEquals(t *testing.T) {
	v := func(kind Kind, text string) Value { return Value{true, kind, text} }
	for _, tc := range []struct {
		v     Value
		want  string
		equal bool
	}{
		{v(String, `"ok"`), `"ok"`, true},
		{v(String, `"ok"`), `"OK"`, false},
		{v(String, `"3"`), `3`, false},
		{v(Number, "3"), `3`, true},
		{v(Number, "3"), `3.0`, true},
		{v(Number, "3"), `3e0`, true},
		{v(Number, "3"), `"3"`, false},
		{v(Number, "0.5"), `5e-1`, true},
		{v(Number, "1e999999999"), `1`, false},
		{v(Number, "12345678901234567"), `12345678901234568`, false},
		{v(Bool, "true"), `true`, true},
		{v(Bool, "true"), `"true"`, false},
		{v(Null, "null"), `null`, true},
		{v(Object, ""), `{}`, false},
		{Value{}, `null`, false},
	} {
		if got := tc.v.Equals(json.RawMessage(tc.want)); got != tc.equal {
			t.Errorf("%+v Equals %s = %v, want %v", tc.v, tc.want, got, tc.equal)
		}
	}
}

func TestDescribe(t *testing.T) {
	long := `"` + strings.Repeat("x", 100) + `"`
	for _, tc := range []struct {
		v    Value
		want string
	}{
		{Value{}, "missing"},
		{Value{true, Object, ""}, "an object"},
		{Value{true, Array, ""}, "an array"},
		{Value{true, String, `"degraded"`}, `"degraded"`},
		{Value{true, String, long}, long[:61] + "..."},
	} {
		if got := tc.v.Describe(); got != tc.want {
			t.Errorf("Describe(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
