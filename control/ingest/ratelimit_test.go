package ingest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"lookout/control/controltest"
)

// burst sends n pings with key at the current (frozen) time and fails
// unless all are accepted.
func burst(t *testing.T, e *env, key string, n int) {
	t.Helper()
	for i := range n {
		if r := e.post(key, pingBody); r.status != 200 {
			t.Fatalf("ping %d: %d %s", i+1, r.status, r.body)
		}
	}
}

// wantLimited checks a 429 answer.
func wantLimited(t *testing.T, r response, retryAfter string) {
	t.Helper()
	r.wantError(t, 429, "rate_limited")
	if got := r.header.Get("Retry-After"); got != retryAfter {
		t.Errorf("Retry-After %q, want %q", got, retryAfter)
	}
	if r.header.Get("X-Quota-State") == "" {
		t.Error("no quota headers on a 429")
	}
}

func TestRateLimitDefault(t *testing.T) {
	e := newEnv(t, &cannedCluster{}, BatchSettings{})
	acct := e.newAccount("")
	other := e.newAccount("")
	burst(t, e, acct.IngestKey, 20)
	wantLimited(t, e.post(acct.IngestKey, pingBody), "1")
	// GET pings share the key's bucket.
	wantLimited(t, e.get(acct.IngestKey, "/ping/backup?status=run"), "1")
	// Another key has its own bucket.
	burst(t, e, other.IngestKey, 1)
	// 10 per second: one token back after 100 ms.
	e.advance(100 * time.Millisecond)
	burst(t, e, acct.IngestKey, 1)
	wantLimited(t, e.post(acct.IngestKey, pingBody), "1")
}

func TestRateLimitPlan(t *testing.T) {
	e := newEnv(t, &cannedCluster{}, BatchSettings{})
	big := e.newAccount(`{"ingest_burst": 50}`)
	burst(t, e, big.IngestKey, 50)
	wantLimited(t, e.post(big.IngestKey, pingBody), "1")

	slow := e.newAccount(`{"ingest_rate_per_second": 0.1, "ingest_burst": 1}`)
	burst(t, e, slow.IngestKey, 1)
	wantLimited(t, e.post(slow.IngestKey, pingBody), "10")
}

// TestRateLimitPlanChange: a new plan applies to a key's bucket from the
// next ping on.
func TestRateLimitPlanChange(t *testing.T) {
	e := newEnv(t, &cannedCluster{}, BatchSettings{})
	acct := e.newAccount("")
	burst(t, e, acct.IngestKey, 20)
	wantLimited(t, e.post(acct.IngestKey, pingBody), "1")

	req, _ := http.NewRequest("PUT", e.admin.URL+"/admin/v1/accounts/"+acct.ID+"/plan",
		strings.NewReader(`{"ingest_rate_per_second": 1000, "ingest_burst": 100}`))
	req.Header.Set("Authorization", "Bearer "+controltest.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("set plan: %d", resp.StatusCode)
	}
	// The next ping sees the new plan; the bucket keeps its (no) tokens.
	wantLimited(t, e.post(acct.IngestKey, pingBody), "1")
	// 50 ms at 1000 per second is 50 tokens (at the old rate, half of one).
	e.advance(50 * time.Millisecond)
	burst(t, e, acct.IngestKey, 50)
	wantLimited(t, e.post(acct.IngestKey, pingBody), "1")
}
