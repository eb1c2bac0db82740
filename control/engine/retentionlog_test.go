package engine_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"lookout/control/engine"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// cannedPrunes answers each PruneEvents with the next of its results (the
// raft edge; the counts themselves are control/state's).
type cannedPrunes struct{ results []*raftv1.Result }

func (c *cannedPrunes) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	if len(c.results) == 0 {
		return &raftv1.Result{Status: raftv1.Status_STATUS_OK}, nil
	}
	res := c.results[0]
	c.results = c.results[1:]
	return res, nil
}

func prunedResult(p *raftv1.PruneCounts) *raftv1.Result {
	n := p.GetEvents() + p.GetEventIds() + p.GetRequestIds() + p.GetSessions()
	return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Deleted: n, Pruned: p}
}

// A sweep logs what it deleted by kind: routine housekeeping (expired
// event ids of a fresh node) at debug, a large prune at info, nothing
// when nothing was deleted.
func TestRetentionLogsWhatItPrunedByName(t *testing.T) {
	sweep := func(results ...*raftv1.Result) string {
		t.Helper()
		var out bytes.Buffer
		log := hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &out})
		r := engine.NewRetention(engine.RetentionOptions{Cluster: &cannedPrunes{results: results}, BatchSize: 1000, NoteworthyPrune: 2000, Logger: log})
		if _, err := r.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	got := sweep(prunedResult(&raftv1.PruneCounts{EventIds: 17}))
	if !strings.Contains(got, "[DEBUG] pruned expired records: event_ids=17 events_before=") || strings.Contains(got, "events=") || strings.Contains(got, "[INFO]") {
		t.Errorf("routine sweep logged:\n%s", got)
	}
	got = sweep(prunedResult(&raftv1.PruneCounts{Events: 1000}), prunedResult(&raftv1.PruneCounts{Events: 990, RequestIds: 10}), prunedResult(&raftv1.PruneCounts{Events: 500}))
	if !strings.Contains(got, "[INFO]  pruned expired records: events=2490 request_ids=10 events_before=") {
		t.Errorf("large sweep logged:\n%s", got)
	}
	if got := sweep(prunedResult(&raftv1.PruneCounts{})); got != "" {
		t.Errorf("empty sweep logged:\n%s", got)
	}
}
