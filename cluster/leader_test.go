package cluster

import (
	"testing"
	"time"
)

func TestMayRemove(t *testing.T) {
	const timeout = time.Minute
	for _, tc := range []struct {
		name    string
		goneFor time.Duration
		voter   bool
		voters  int
		expect  int
		want    bool
	}{
		{"voter before the timeout", timeout - time.Second, true, 5, 3, false},
		{"non-voter before the timeout", timeout - time.Second, false, 5, 3, false},
		{"voter at the timeout", timeout, true, 5, 3, true},
		{"voter long gone", 10 * timeout, true, 4, 3, true},
		{"non-voter after the timeout, voters at quorum", timeout, false, 2, 3, true},
		{"non-voter after the timeout, no voters to spare", timeout, false, 1, 5, true},
		{"expect 3: 3 voters leave 2, a quorum", timeout, true, 3, 3, true},
		{"expect 3: 2 voters would leave 1", timeout, true, 2, 3, false},
		{"expect 5: 4 voters leave 3, a quorum", timeout, true, 4, 5, true},
		{"expect 5: 3 voters would leave 2", timeout, true, 3, 5, false},
		{"expect 5: 6 voters", timeout, true, 6, 5, true},
		{"expect 1: 2 voters leave 1", timeout, true, 2, 1, true},
		{"expect 1: the last voter", timeout, true, 1, 1, false},
		{"expect 0 counts as 1", timeout, true, 2, 0, true},
		{"expect 0: the last voter", timeout, true, 1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mayRemove(tc.goneFor, timeout, tc.voter, tc.voters, tc.expect); got != tc.want {
				t.Errorf("mayRemove(%v, %v, voter=%v, voters=%d, expect=%d) = %v, want %v",
					tc.goneFor, timeout, tc.voter, tc.voters, tc.expect, got, tc.want)
			}
		})
	}
}
