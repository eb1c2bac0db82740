package jsonpath

import (
	"reflect"
	"testing"
)

// FuzzParse: any string either fails to parse or gives a path whose
// canonical form parses to the same path, within the bounds; looking it up
// in a document never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"$", "$.status", "$.a.b[0].c", `$['a.b']`, `$["it's"]`, `$['x\\']`, "$[12][0]", "$.état", "$[", "$..a", "$[01]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		if len(s) > MaxLen || p.Len() > MaxSegments {
			t.Fatalf("Parse(%q) accepted a path over the bounds", s)
		}
		again, err := Parse(p.String())
		if err != nil {
			t.Fatalf("the canonical form %q of %q does not parse: %v", p.String(), s, err)
		}
		if !reflect.DeepEqual(p, again) {
			t.Fatalf("%q -> %q -> %#v, want %#v", s, p.String(), again, p)
		}
		_, _ = p.Lookup([]byte(doc))
	})
}

// FuzzLookup: any document and path give a value or an error, never a
// panic; a value found is one Describe can name.
func FuzzLookup(f *testing.F) {
	f.Add("$.checks[1].name", doc)
	f.Add("$.a", `{"a": [`)
	f.Add("$[0]", `[[[[`)
	f.Add("$.a.b", `{"a": {"b": "\u00e9"}}`)
	f.Fuzz(func(t *testing.T, path, document string) {
		p, err := Parse(path)
		if err != nil {
			return
		}
		v, err := p.Lookup([]byte(document))
		if err == nil && v.Found && v.Describe() == "" {
			t.Fatalf("Lookup(%q) found %+v that Describe cannot name", path, v)
		}
	})
}
