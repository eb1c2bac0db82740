package state

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func channels(i, size int) []byte {
	return []byte(fmt.Sprintf(`[{"n":%d,"pad":"%s"}]`, i, strings.Repeat("x", size)))
}

// fitsOneTxn applies entries in one transaction, then discards it, and
// returns how many fitted before badger.ErrTxnTooBig (all when none did).
func fitsOneTxn(t *testing.T, s *Store, es []Entry) int {
	t.Helper()
	txn := s.db().NewTransaction(true)
	defer txn.Discard()
	for i, e := range es {
		if _, err := s.applyEntry(txn, e); errors.Is(err, badger.ErrTxnTooBig) {
			return i
		} else if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	return len(es)
}

func TestApplyBatchSplitsBigBatches(t *testing.T) {
	t.Parallel() // heavy: overlaps the package's other heavy tests
	for _, tc := range []struct {
		name      string
		n, size   int  // groups and channels_json bytes
		mustSplit bool // the batch is known not to fit one transaction
	}{
		// Values under the 1 KiB value threshold count fully against the
		// ~600 KiB transaction limit of the Small options.
		{name: "inline values", n: 1500, size: 900, mustSplit: true},
		// 200 KiB values go to the value log; only pointers count.
		{name: "value log values", n: 40, size: 200 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			mustOK(t, s, newAccount("a"))
			var cmds []*raftv1.Command
			for i := range tc.n {
				cmds = append(cmds, withRID(createGroup("a", fmt.Sprintf("g%05d", i), fmt.Sprint("name", i), channels(i, tc.size)), fmt.Sprint("rid", i), t0))
			}
			// Late entries depend on early ones across the split.
			cmds = append(cmds,
				createGroup("a", "g99999", "name0", nil),                  // name taken by the first entry
				withRID(createGroup("a", "gdup", "dup", nil), "rid0", t0), // retry of the first entry
			)
			es := entries(2, cmds...)
			fit := fitsOneTxn(t, s, es)
			t.Logf("%d of %d entries fit one transaction", fit, len(es))
			if tc.mustSplit && fit >= len(es)-2 {
				t.Fatalf("test batch fits one transaction (%d of %d): it does not exercise splitting", fit, len(es))
			}

			// A restart left the first entries applied: they are replayed.
			const pre = 3
			s.ApplyBatch(es[:pre])
			res := s.ApplyBatch(es)
			if len(res) != len(es) {
				t.Fatalf("%d results for %d entries", len(res), len(es))
			}
			for i := range tc.n {
				if i < pre {
					if res[i] != nil {
						t.Fatalf("replayed entry %d: result %v", i, res[i])
					}
					continue
				}
				if res[i].GetStatus() != raftv1.Status_STATUS_OK {
					t.Fatalf("entry %d: %v %s", i, res[i].GetStatus(), res[i].GetMessage())
				}
			}
			if got := res[tc.n].GetStatus(); got != raftv1.Status_STATUS_CONFLICT {
				t.Errorf("duplicate name after the split: %v", got)
			}
			if got := res[tc.n+1].GetStatus(); got != raftv1.Status_STATUS_OK {
				t.Errorf("retry after the split: %v", got)
			}
			if want := es[len(es)-1].Index; s.AppliedIndex() != want {
				t.Errorf("applied index %d, want %d", s.AppliedIndex(), want)
			}
			gs, err := s.NotificationGroups("a")
			if err != nil {
				t.Fatal(err)
			}
			if len(gs) != tc.n {
				t.Fatalf("%d groups, want %d", len(gs), tc.n)
			}
			for i, g := range gs {
				if g.GetId() != fmt.Sprintf("g%05d", i) || !bytes.Equal(g.GetChannelsJson(), channels(i, tc.size)) {
					t.Fatalf("group %d: id %s, %d channel bytes", i, g.GetId(), len(g.GetChannelsJson()))
				}
			}

			// Entry by entry gives the same state.
			one := openStore(t)
			mustOK(t, one, newAccount("a"))
			for _, e := range es {
				one.ApplyBatch([]Entry{e})
			}
			if !bytes.Equal(dump(t, s), dump(t, one)) {
				t.Error("split batch and entry-by-entry application differ")
			}
		})
	}
}

// TestApplyBatchRefusesEntriesBadgerCannotHold: an entry Badger could
// never hold (it used to panic every node at every replay) is over the
// command bounds, refused as INVALID, and the rest of the batch applies.
func TestApplyBatchRefusesEntriesBadgerCannotHold(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  *raftv1.Command
	}{
		// Larger than the value log file (16 MiB with Small).
		{"value over the value log file size", createGroup("a", "big", "big", make([]byte, 16<<20+1))},
		// Badger keys are limited to 65000 bytes.
		{"key over Badger's key limit", createGroup("a", "big", strings.Repeat("n", 65001), nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			mustOK(t, s, newAccount("a"))
			res := s.ApplyBatch(entries(2, createGroup("a", "small", "small", nil), tc.cmd, createGroup("a", "after", "after", nil)))
			if res[0].GetStatus() != raftv1.Status_STATUS_OK || res[2].GetStatus() != raftv1.Status_STATUS_OK {
				t.Fatalf("results %v", res)
			}
			if res[1].GetStatus() != raftv1.Status_STATUS_INVALID || res[1].GetCode() != CodeCommandTooLarge {
				t.Fatalf("result %v", res[1])
			}
			if gs, _ := s.NotificationGroups("a"); s.AppliedIndex() != 4 || len(gs) != 2 {
				t.Fatalf("applied %d, %d groups", s.AppliedIndex(), len(gs))
			}
		})
	}
}
