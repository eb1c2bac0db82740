package agentident

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		id, name, version string
		ok                bool
	}{
		{"ag_0123456789abcdef0123456789abcdef", "edge-1", "v1.2.3", true},
		{"a1", "", "", true},
		{"host.example-1_x", "Küche 2", "dev", true},
		{"", "edge", "v1", false},
		{strings.Repeat("a", MaxID+1), "edge", "v1", false},
		{"ag 1", "edge", "v1", false},
		{"ag\x00\x01", "edge", "v1", false},
		{"ag_\xff", "edge", "v1", false},
		{"ag_1", "edge\n", "v1", false},
		{"ag_1", "\xff\xfe", "v1", false},
		{"ag_1", strings.Repeat("n", MaxName+1), "v1", false},
		{"ag_1", "edge", strings.Repeat("v", MaxVersion+1), false},
	} {
		if err := Check(tc.id, tc.name, tc.version); (err == nil) != tc.ok {
			t.Errorf("Check(%q, %q, %q) = %v, want ok %v", tc.id, tc.name, tc.version, err, tc.ok)
		}
	}
}
