package mask

import (
	"reflect"
	"strings"
	"testing"
)

func TestSecret(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"short", "****"},
		{"0123456789ab", "****89ab"},
		{"https://hooks.slack.com/services/T000/B000/XXXXXXXXsecret", "https://hooks.slack.com/****cret"},
		{"", "****"},
	} {
		if got := Secret(tc.in); got != tc.want {
			t.Errorf("Secret(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestJSONMasksEveryString(t *testing.T) {
	in := map[string]any{
		"url":     "https://example.com/hook/abcdefghijklmnop",
		"secret":  "s3cr3t-value-123456",
		"port":    float64(25),
		"tls":     true,
		"headers": map[string]any{"Authorization": "Bearer tokentokentoken"},
		"to":      []any{"ops@example.com"},
		"none":    nil,
	}
	got := JSON(in).(map[string]any)
	want := map[string]any{
		"url":     "https://example.com/****mnop",
		"secret":  "****3456",
		"port":    float64(25),
		"tls":     true,
		"headers": map[string]any{"Authorization": "****oken"},
		"to":      []any{"****.com"},
		"none":    nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("JSON = %#v\nwant %#v", got, want)
	}
	for _, s := range []string{"s3cr3t", "tokentoken", "abcdefghijkl"} {
		if strings.Contains(strings.Join(flat(got), " "), s) {
			t.Errorf("%q shown", s)
		}
	}
}

func flat(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, flat(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range v {
			out = append(out, flat(e)...)
		}
		return out
	}
	return nil
}
