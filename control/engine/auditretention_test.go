package engine_test

import (
	"context"
	"testing"
	"time"

	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/engine"
	"lookout/control/state"
)

// TestRetentionDeletesOldAuditEntries: the sweep deletes audit entries
// older than AuditMaxAge (default 90 days) with the events' pruning, and
// none younger.
func TestRetentionDeletesOldAuditEntries(t *testing.T) {
	srv := controltest.NewServer(t)
	ctx := context.Background()
	acct, err := srv.API.CreateAccount(ctx, admin.AccountRequest{Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	entries := func() int {
		es, err := srv.Store.AuditLog(acct.ID, nil, state.AuditFilter{}, 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	if entries() != 1 {
		t.Fatalf("%d entries after the account's creation, want 1", entries())
	}
	day := 24 * time.Hour
	for _, tc := range []struct {
		later time.Duration
		want  int
	}{{89 * day, 1}, {91 * day, 0}} {
		now := srv.Now.Add(tc.later)
		r := engine.NewRetention(engine.RetentionOptions{Cluster: srv.Cluster, Now: func() time.Time { return now }})
		if _, err := r.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if got := entries(); got != tc.want {
			t.Fatalf("%v later: %d entries, want %d", tc.later, got, tc.want)
		}
	}
}
