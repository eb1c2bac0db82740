package state

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Open runs of a ping monitor.
//
// A monitor's open runs are kept together in one value, runs:<uuid>, ordered
// by start time (then seq), rather than one key per run: pairing a complete
// without series needs the newest run, and finding it among per-run keys
// takes an iterator, which inside a write transaction copies and sorts every
// pending write of the transaction (Badger's pendingWritesIterator). On the
// ingest path that would cost O(writes of the raft batch) per event. One
// value is a point read, cached for the whole IngestBatch.
//
// The value is the wire form of a message with `repeated OpenRun runs = 1`.
//
// Runs that started more than runMaxAgeMillis before the event being applied
// are dropped whenever the list is touched (they would not be paired
// anyway), and a monitor keeps at most maxOpenRuns runs (the oldest go
// first), so a job that never completes cannot grow the value unboundedly.

const (
	runMaxAgeMillis = 72 * 60 * 60 * 1000
	maxOpenRuns     = 100
)

func runsKey(monitorID string) []byte { return k(prefixRuns, monitorID) }

// decodeRuns decodes the value of runs:<monitorID>.
func decodeRuns(monitorID string, v []byte) ([]*statev1.OpenRun, error) {
	var runs []*statev1.OpenRun
	for len(v) > 0 {
		num, typ, n := protowire.ConsumeTag(v)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			return nil, fmt.Errorf("decode open runs of %s: bad tag", monitorID)
		}
		b, m := protowire.ConsumeBytes(v[n:])
		if m < 0 {
			return nil, fmt.Errorf("decode open runs of %s: bad length", monitorID)
		}
		r := new(statev1.OpenRun)
		if err := proto.Unmarshal(b, r); err != nil {
			return nil, fmt.Errorf("decode open runs of %s: %w", monitorID, err)
		}
		runs = append(runs, r)
		v = v[n+m:]
	}
	return runs, nil
}

// encodeRuns is the value of runs: for runs; nil when there are none (the
// key is then deleted).
func encodeRuns(runs []*statev1.OpenRun) ([]byte, error) {
	var v []byte
	for _, r := range runs {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(r)
		if err != nil {
			return nil, err
		}
		v = protowire.AppendTag(v, 1, protowire.BytesType)
		v = protowire.AppendBytes(v, b)
	}
	return v, nil
}

// dropStaleRuns removes the runs started more than runMaxAgeMillis before
// at (a prefix of the list); it reports whether it removed any.
func dropStaleRuns(runs []*statev1.OpenRun, at int64) ([]*statev1.OpenRun, bool) {
	i := 0
	for i < len(runs) && at-runs[i].GetStartedUnixMs() > runMaxAgeMillis {
		i++
	}
	return runs[i:], i > 0
}

// openRun adds a run started at start by event seq; a run of the same
// non-empty series is replaced.
func openRun(runs []*statev1.OpenRun, series string, start int64, seq uint64) []*statev1.OpenRun {
	runs, _ = dropStaleRuns(runs, start)
	if series != "" {
		for i, r := range runs {
			if r.GetSeries() == series {
				runs = append(runs[:i:i], runs[i+1:]...)
				break
			}
		}
	}
	i := len(runs)
	for i > 0 && (runs[i-1].GetStartedUnixMs() > start || runs[i-1].GetStartedUnixMs() == start && runs[i-1].GetEventSeq() > seq) {
		i--
	}
	runs = append(runs[:i:i], append([]*statev1.OpenRun{{Series: series, StartedUnixMs: start, EventSeq: seq}}, runs[i:]...)...)
	if len(runs) > maxOpenRuns {
		runs = runs[len(runs)-maxOpenRuns:]
	}
	return runs
}

// closeRun pairs a complete or fail at time at with an open run: the run of
// series, or without series the newest run of any series. It returns the
// remaining runs, the paired run's start, whether one was paired, and
// whether the list changed.
func closeRun(runs []*statev1.OpenRun, series string, at int64) (rest []*statev1.OpenRun, start int64, paired, changed bool) {
	runs, changed = dropStaleRuns(runs, at)
	i := -1
	if series == "" {
		i = len(runs) - 1
	} else {
		for j, r := range runs {
			if r.GetSeries() == series {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return runs, 0, false, changed
	}
	start = runs[i].GetStartedUnixMs()
	return append(runs[:i:i], runs[i+1:]...), start, true, true
}
