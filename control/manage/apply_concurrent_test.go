package manage_test

import (
	"fmt"
	"sync"
	"testing"
)

// Concurrent applies of the same bundle of new monitors all succeed: one
// creates them, the others find them made and report them unchanged. None
// answers 422 name_already_exists for a name that was free when it read
// the state and taken by the time its command was applied.
func TestConcurrentAppliesOfTheSameNewNames(t *testing.T) {
	a := newAPI(t)
	const rounds, clients, monitors = 3, 8, 10
	for round := range rounds {
		var entries []map[string]any
		for i := range monitors {
			entries = append(entries, ping(fmt.Sprintf("r%d-job-%d", round, i), nil))
		}
		b := bundle(entries...)
		type answer struct {
			status int
			body   map[string]any
		}
		answers := make([]answer, clients)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				<-start
				status, body, _ := a.do("POST", "/api/v1/monitors/apply", b)
				answers[c] = answer{status, body}
			})
		}
		close(start)
		wg.Wait()
		created := 0
		for c, ans := range answers {
			if ans.status != 200 {
				t.Fatalf("round %d, client %d: %d %v", round, c, ans.status, ans.body)
			}
			switch s := summary(ans.body); {
			case s["create"] == monitors && s["unchanged"] == 0:
				created++
			case s["create"] != 0 || s["unchanged"] != monitors:
				t.Fatalf("round %d, client %d: summary %v", round, c, s)
			}
		}
		if created != 1 {
			t.Fatalf("round %d: %d answers created the monitors, want 1", round, created)
		}
	}
	if status, body, _ := a.do("GET", "/api/v1/monitors", nil); status != 200 || len(body["monitors"].([]any)) != rounds*monitors {
		t.Fatalf("list: %d, %d monitors, want %d", status, len(body["monitors"].([]any)), rounds*monitors)
	}
}

// An apply overtaken on every attempt gives up after a bounded number of
// them with 409 concurrent_change, having written nothing of its own.
func TestApplyOvertakenEveryTimeIs409(t *testing.T) {
	a := newAPI(t)
	var written int
	undo := a.srv.Cluster.OvertakePutMonitors()
	defer undo()
	status, body, _ := a.do("POST", "/api/v1/monitors/apply", bundle(ping("contended", nil)))
	if status != 409 || body["code"] != "concurrent_change" || body["message"] == "" {
		t.Fatalf("%d %v, want 409 concurrent_change", status, body)
	}
	undo()
	_, list, _ := a.do("GET", "/api/v1/monitors", nil)
	for _, m := range list["monitors"].([]any) {
		if m.(map[string]any)["timeout_seconds"] == 600.0 {
			written++
		}
	}
	if written != 0 {
		t.Fatalf("the overtaken apply wrote %d monitors: %v", written, list)
	}
	// Undisturbed, the same bundle goes through: it updates the monitor
	// the race left behind.
	if status, body, _ := a.do("POST", "/api/v1/monitors/apply", bundle(ping("contended", nil))); status != 200 || summary(body)["update"] != 1 {
		t.Fatalf("after the race: %d %v", status, body)
	}
}
