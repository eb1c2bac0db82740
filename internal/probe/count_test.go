package probe_test

import (
	"testing"
	"time"

	"lookout/internal/probe"
)

func TestCountAndMillis(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1840: "1,840", 1048576: "1,048,576", -12345: "-12,345"} {
		if got := probe.Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	if got := probe.Millis(1840 * time.Millisecond); got != "1,840 ms" {
		t.Errorf("Millis = %q", got)
	}
}
