package pingwire

import "testing"

func TestCutUTF8(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 3, "abc"}, {"abc", 2, "ab"}, {"aé", 2, "a"}, {"aé", 3, "aé"}, {"€", 2, ""}, {"", 0, ""},
	} {
		if got := CutUTF8(tc.in, tc.max); got != tc.want {
			t.Errorf("CutUTF8(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
