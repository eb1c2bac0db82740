package state

import (
	"errors"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// ConfirmRegions is how many of m's regions must see it fail in one slot
// before it is down: its confirm_regions, 1 when unset,
// never more than its regions.
func ConfirmRegions(m *statev1.Monitor) int {
	n := int(m.GetConfirmRegions())
	if n < 1 {
		n = 1
	}
	return min(n, max(len(m.GetRegions()), 1))
}

// onRegionVerdict judges a check with regions by the final execution e of
// one region (already stored). The check is down in a slot once
// ConfirmRegions of its regions saw it fail in that slot: the verdict is
// then failed, and one check.failed (or ssl.alert) is raised, naming the
// regions that saw it fail; the regions whose failures come later in the
// same slot raise nothing more. A failure that is not (yet) confirmed
// changes no verdict. While down, a success of a later slot is the
// recovery; a success in the slot that was judged down changes nothing
// (another region saw it up, but enough saw it fail).
func onRegionVerdict(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor, cs *statev1.CheckStatus, e *raftv1.Execution) error {
	if e.GetStatus() == ExecFailed {
		failed, err := failedRegions(txn, m, e.GetSlotUnixMs())
		if err != nil || len(failed) < ConfirmRegions(m) {
			return err
		}
		return onVerdict(txn, ctx, pos, m, cs, e, failed...)
	}
	if cs.GetVerdict() == ExecFailed && e.GetSlotUnixMs() <= cs.GetVerdictSlotUnixMs() {
		return nil
	}
	return onVerdict(txn, ctx, pos, m, cs, e)
}

// failedRegions lists m's regions, in m's order, whose execution of the
// slot is a failure that judged the target (final, not Interrupted).
func failedRegions(txn *badger.Txn, m *statev1.Monitor, slotMs int64) ([]string, error) {
	var out []string
	for _, r := range m.GetRegions() {
		var e raftv1.Execution
		err := getProto(txn, executionKey(m.GetUuid(), slotMs, r), &e)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if e.GetStatus() == ExecFailed && !Interrupted(&e) {
			out = append(out, r)
		}
	}
	return out, nil
}
