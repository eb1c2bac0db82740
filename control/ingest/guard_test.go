package ingest

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"lookout/cluster"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// laggingCluster is a node that has not applied everything yet: its
// ConsistentRead runs catchUp (which applies what the leader had).
type laggingCluster struct {
	*cannedCluster
	catchUp func() error
	reads   atomic.Int32
}

func (c *laggingCluster) ConsistentRead(context.Context) error {
	c.reads.Add(1)
	return c.catchUp()
}

// TestAuthChecksUnknownKeyWithLeader: a key this node does not hold yet is
// looked up again after a consistent read, so a node catching up accepts
// a key the leader already created; when the leader cannot be asked, the
// answer is 503 with Retry-After, never 401.
func TestAuthChecksUnknownKeyWithLeader(t *testing.T) {
	cl := &laggingCluster{cannedCluster: &cannedCluster{}}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount(bigBurst)
	secret, hash, err := apikey.New(apikey.Ingest)
	if err != nil {
		t.Fatal(err)
	}
	// The key exists on the leader; this node applies it when it catches up.
	cl.catchUp = func() error {
		_, err := e.admin.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_CreateKey{CreateKey: &raftv1.CreateKey{
			Key: &raftv1.Key{Id: uuid.NewString(), AccountId: acct.ID, Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "new", Hash: hash},
		}}})
		cl.catchUp = func() error { return nil }
		return err
	}
	e.post(secret, pingBody).want(t, 200, success)
	checkLastEvent(t, cl.cannedCluster, acct.ID, nil)
	// A known key needs no round trip; an unknown one stays unknown.
	reads := cl.reads.Load()
	e.post(secret, pingBody).want(t, 200, success)
	e.post(acct.IngestKey, pingBody).want(t, 200, success)
	if cl.reads.Load() != reads {
		t.Fatal("a known key was checked with the leader")
	}
	e.post("ck_notakey", pingBody).wantError(t, 401, "unauthorized")
	if cl.reads.Load() != reads+1 {
		t.Fatalf("%d consistent reads for an unknown key, want 1", cl.reads.Load()-reads)
	}
	// No leader to ask: 503, not 401.
	cl.catchUp = func() error { return fmt.Errorf("read index: %w", cluster.ErrNoLeader) }
	for _, r := range []response{
		e.post("ck_unknownyet", pingBody),
		e.get("ck_unknownyet", "/ping/backup?status=run"),
	} {
		r.wantError(t, 503, "unavailable")
		if r.header.Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
	}
}

// TestStateMachineOutcomes: the outcomes the state machine decides when it
// applies the batch: a key revoked in between is 401, a monitor beyond the
// plan's creations per minute is 429 with a code and Retry-After.
func TestStateMachineOutcomes(t *testing.T) {
	cl := &cannedCluster{answer: func(ev *raftv1.Event) *raftv1.EventResult {
		switch ev.GetMonitor() {
		case "revoked":
			return &raftv1.EventResult{Outcome: raftv1.EventOutcome_EVENT_OUTCOME_UNAUTHORIZED}
		default:
			return &raftv1.EventResult{Outcome: raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_RATE,
				Quota: &raftv1.QuotaStatus{State: "ok", Used: 1, ResetsAtUnixMs: nextMonth}}
		}
	}}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount(bigBurst)
	r := e.post(acct.IngestKey, `{"event_type":"ping","monitor":"revoked","status":"run"}`)
	r.wantError(t, 401, "unauthorized")
	if r.header.Get("X-Quota-State") != "" {
		t.Error("quota headers on a 401")
	}
	r = e.post(acct.IngestKey, `{"event_type":"ping","monitor":"new-one","status":"run"}`)
	if r.status != 429 || r.header.Get("X-Quota-State") != "ok" {
		t.Fatalf("status %d %s", r.status, r.body)
	}
	if body := r.json(t); body["status"] != "error" || body["code"] != "monitor_creation_rate_limited" || body["message"] == "" {
		t.Fatalf("body %v", body)
	}
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
}

// TestMonitorCreationRateEndToEnd: the plan's monitors_created_per_minute,
// set through the operator API, holds pings back in the real state machine.
func TestMonitorCreationRateEndToEnd(t *testing.T) {
	e := newEnv(t, nil, BatchSettings{})
	acct := e.newAccount(`{"ingest_burst":1000,"monitors_created_per_minute":2}`)
	for i, want := range []int{200, 200, 429} {
		r := e.post(acct.IngestKey, fmt.Sprintf(`{"event_type":"ping","monitor":"job-%d","status":"run"}`, i))
		if r.status != want {
			t.Fatalf("monitor %d: %d %s", i, r.status, r.body)
		}
	}
	e.post(acct.IngestKey, `{"event_type":"ping","monitor":"job-0","status":"complete"}`).want(t, 200, success)
}

// TestTimestampBounds: a timestamp more than 5 minutes ahead of the
// receiving node's clock, or older than the retention age, is a 400 that
// names the field.
func TestTimestampBounds(t *testing.T) {
	cl := &cannedCluster{}
	e := newEnv(t, cl, BatchSettings{})
	e.api.retention = 24 * time.Hour
	acct := e.newAccount(bigBurst)
	now := e.clock().Unix()
	future := "invalid field: timestamp: more than 5 minutes in the future"
	past := "invalid field: timestamp: older than the event retention age (24h0m0s)"
	for _, tc := range []struct {
		ts  int64
		err string
	}{
		{now + 300, ""},
		{now + 301, future},
		{32503680000, future}, // the year 3000
		{now - 24*3600, ""},
		{now - 24*3600 - 1, past},
		{1, past},
	} {
		before := len(cl.events())
		for _, r := range []response{
			e.post(acct.IngestKey, fmt.Sprintf(`{"event_type":"ping","monitor":"backup","status":"run","timestamp":%d}`, tc.ts)),
			e.get(acct.IngestKey, fmt.Sprintf("/ping/backup?status=run&timestamp=%d", tc.ts)),
		} {
			if tc.err == "" {
				r.want(t, 200, success)
				continue
			}
			r.wantError(t, 400, tc.err)
		}
		if tc.err != "" && len(cl.events()) != before {
			t.Fatalf("timestamp %d: an event was applied", tc.ts)
		}
	}
}
