package ingest

import (
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingwire/pingwiretest"
)

// s repeats "a" n times.
func s(n int) string { return strings.Repeat("a", n) }

// TestPostValidation runs the shared validation table through this
// node's POST /ping.
func TestPostValidation(t *testing.T) {
	cl := &cannedCluster{}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount(bigBurst)
	for _, tc := range pingwiretest.PostCases() {
		t.Run(tc.Name, func(t *testing.T) {
			var hdr []string
			if tc.Idem != "" {
				hdr = []string{"Idempotency-Key", tc.Idem}
			}
			before := len(cl.events())
			r := e.post(acct.IngestKey, tc.Body, hdr...)
			if tc.Err != "" {
				r.wantError(t, 400, tc.Err)
				if len(cl.events()) != before {
					t.Fatal("a refused event was applied")
				}
				if r.header.Get("X-Quota-State") == "" {
					t.Error("no quota headers on a 400")
				}
				return
			}
			r.want(t, 200, success)
			checkLastEvent(t, cl, acct.ID, tc.Want)
		})
	}
}

// checkLastEvent checks the last applied event against want (its account
// and receipt time aside); want nil checks only that one was applied.
func checkLastEvent(t *testing.T, cl *cannedCluster, accountID string, want *raftv1.Event) {
	t.Helper()
	evs := cl.events()
	if len(evs) == 0 {
		t.Fatal("no event applied")
	}
	got := proto.CloneOf(evs[len(evs)-1])
	if got.AccountId != accountID || got.ReceivedUnixMs == 0 || got.KeyId == "" {
		t.Errorf("account %q received %d key %q", got.AccountId, got.ReceivedUnixMs, got.KeyId)
	}
	if want == nil {
		return
	}
	got.AccountId, got.ReceivedUnixMs, got.KeyId = "", 0, ""
	if !proto.Equal(got, want) {
		t.Errorf("event\n%v\nwant\n%v", got, want)
	}
}

// TestGetValidation runs the shared validation table through this
// node's GET /ping/{monitor}.
func TestGetValidation(t *testing.T) {
	cl := &cannedCluster{}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount(bigBurst)
	for _, tc := range pingwiretest.GetCases() {
		t.Run(tc.Name, func(t *testing.T) {
			var hdr []string
			if tc.Idem != "" {
				hdr = []string{"Idempotency-Key", tc.Idem}
			}
			r := e.get(acct.IngestKey, tc.Path, hdr...)
			if tc.Err != "" {
				r.wantError(t, 400, tc.Err)
				return
			}
			r.want(t, 200, success)
			checkLastEvent(t, cl, acct.ID, tc.Want)
		})
	}
}

func TestMessageCut(t *testing.T) {
	cl := &cannedCluster{}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount("")
	// "a" then two-byte characters: byte 65536 falls inside one.
	msg := "a" + strings.Repeat("é", 40000)
	e.post(acct.IngestKey, `{"event_type":"ping","monitor":"m","status":"run","message":"`+msg+`"}`).want(t, 200, success)
	got := cl.events()[0].GetMessage()
	if len(got) != 65535 || !utf8.ValidString(got) || !strings.HasPrefix(msg, got) {
		t.Fatalf("message of %d bytes (valid %v), want the first 65535 bytes", len(got), utf8.ValidString(got))
	}
	// At the limit nothing is cut; GET's msg is cut alike.
	exact := s(65536)
	e.post(acct.IngestKey, `{"event_type":"ping","monitor":"m","status":"run","message":"`+exact+`"}`).want(t, 200, success)
	if got := cl.events()[1].GetMessage(); got != exact {
		t.Fatalf("message of %d bytes, want 65536", len(got))
	}
	e.get(acct.IngestKey, "/ping/m?status=run&msg="+s(70000)).want(t, 200, success)
	if got := cl.events()[2].GetMessage(); got != exact {
		t.Fatalf("GET message of %d bytes, want 65536", len(got))
	}
}

func TestBodyTooLarge(t *testing.T) {
	cl := &cannedCluster{}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount("")
	body := `{"event_type":"ping","monitor":"m","status":"run","message":"` + s(1<<20) + `"}`
	e.post(acct.IngestKey, body).wantError(t, 413, "request too large")
	if n := len(cl.events()); n != 0 {
		t.Fatalf("%d events applied", n)
	}
}
