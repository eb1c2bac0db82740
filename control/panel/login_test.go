package panel

import "testing"

func TestSafeNext(t *testing.T) {
	for _, tc := range []struct{ next, want string }{
		{"/", "/"},
		{"/keys", "/keys"},
		{"/monitors/abc?x=1#top", "/monitors/abc?x=1#top"},
		{"/a/b/../c", "/a/b/../c"},
		{"/%09/evil.example", "/%09/evil.example"}, // still escaped: a path of the panel
		{"/\t/evil.example", "/"},                  // what ?next=/%09/evil.example decodes to
		{"/\t/x", "/"},
		{"/\n/x", "/"},
		{"/\r/x", "/"},
		{"/x\x00", "/"},
		{"/x\x7f", "/"},
		{"/x\u0085", "/"}, // a C1 control
		{"/\xff", "/"},    // not UTF-8
		{"//x", "/"},
		{"//evil.example/", "/"},
		{"/\\x", "/"},
		{"/\\evil.example", "/"},
		{"https://x", "/"},
		{"https://evil.example/", "/"},
		{"javascript:alert(1)", "/"},
		{"x", "/"},
		{"", "/"},
		{"/live", "/"},
		{"/monitors/abc/live?next=1", "/"},
	} {
		if got := safeNext(tc.next); got != tc.want {
			t.Errorf("safeNext(%q) = %q, want %q", tc.next, got, tc.want)
		}
	}
}
