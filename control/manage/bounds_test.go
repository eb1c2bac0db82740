package manage_test

import (
	"fmt"
	"strings"
	"testing"

	"lookout/control/state"
)

// minimalBundle is a bundle of n minimal ping entries.
func minimalBundle(n int) map[string]any {
	ms := make([]map[string]any, n)
	for i := range ms {
		ms[i] = map[string]any{"kind": "ping", "name": fmt.Sprintf("job-%d", i), "timeout_seconds": 60}
	}
	return bundle(ms...)
}

// TestApplyOfTooManyChangesIsRefused is the reported crash: an apply of
// 60,000 minimal entries (a few MB, under the body limit) became one raft
// entry too big for one Badger transaction, and the state machine
// panicked. It is refused with 422 bundle_too_large before anything is
// proposed, and the node keeps working.
func TestApplyOfTooManyChangesIsRefused(t *testing.T) {
	a := newAPI(t)
	applied := a.srv.Store.AppliedIndex()
	status, body, _ := a.do("POST", "/api/v1/monitors/apply", minimalBundle(60_000))
	if status != 422 || fmt.Sprint(codes(body, "bundle")) != "[bundle_too_large]" {
		t.Fatalf("apply of 60,000 entries: %d %v", status, body["message"])
	}
	if a.srv.Store.AppliedIndex() != applied {
		t.Fatal("the refused apply wrote")
	}
	// The node keeps working: a bundle within the bound applies.
	status, body, _ = a.do("POST", "/api/v1/monitors/apply", minimalBundle(10))
	if status != 200 || summary(body)["create"] != 10 {
		t.Fatalf("apply after: %d %v", status, body)
	}
}

// TestApplyBounds: an apply may change state.MaxPutMonitors monitors in
// bytes up to state.MaxPutMonitorsBytes; unchanged entries do not count,
// a dry run is refused alike, and over either bound nothing is written.
func TestApplyBounds(t *testing.T) {
	a := newAPI(t)
	over := minimalBundle(state.MaxPutMonitors + 1)
	applied := a.srv.Store.AppliedIndex()
	for _, path := range []string{"/api/v1/monitors/apply?dry_run=true", "/api/v1/monitors/apply"} {
		if status, body, _ := a.do("POST", path, over); status != 422 || fmt.Sprint(codes(body, "bundle")) != "[bundle_too_large]" {
			t.Fatalf("%s of %d changes: %d %v", path, state.MaxPutMonitors+1, status, body)
		}
	}
	if a.srv.Store.AppliedIndex() != applied {
		t.Fatal("a refused apply wrote")
	}
	// In two parts it applies; then the whole bundle is unchanged.
	half := over["monitors"].([]any)
	if status, body, _ := a.do("POST", "/api/v1/monitors/apply", bundleOf(half[:state.MaxPutMonitors])); status != 200 || summary(body)["create"] != state.MaxPutMonitors {
		t.Fatalf("first part: %d %v", status, body)
	}
	if status, body, _ := a.do("POST", "/api/v1/monitors/apply", over); status != 200 || summary(body)["create"] != 1 || summary(body)["unchanged"] != state.MaxPutMonitors {
		t.Fatalf("whole bundle: %d %v", status, body)
	}
	// Too many bytes: checks with the longest expected content.
	var big []any
	for i := range 160 {
		m := httpCheck(fmt.Sprint("big-", i), "https://example.com/")
		m["config"].(map[string]any)["expected_content"] = strings.Repeat("\U0001D11E", 4096)
		big = append(big, m)
	}
	status, body, _ := a.do("POST", "/api/v1/monitors/apply", bundleOf(big))
	if status != 422 || fmt.Sprint(codes(body, "bundle")) != "[bundle_too_large]" {
		t.Fatalf("apply of %d bytes of changes: %d %v", 160*16<<10, status, body)
	}
	if status, _, _ := a.do("POST", "/api/v1/monitors/apply", bundleOf(big[:80])); status != 200 {
		t.Fatalf("half of it: %d", status)
	}
}

func bundleOf(ms []any) map[string]any {
	return map[string]any{"manifest_version": 1, "monitors": ms}
}

// TestDeleteOfAnOverlongIDIsNotFound: no monitor has an id too long for a
// command; deleting one is 404, not a refused command.
func TestDeleteOfAnOverlongIDIsNotFound(t *testing.T) {
	a := newAPI(t)
	if status, body, _ := a.do("DELETE", "/api/v1/monitors/"+strings.Repeat("x", state.MaxKeyPartBytes+1)+"?confirm=true", nil); status != 404 {
		t.Fatalf("%d %v", status, body)
	}
}
