package pingwire_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingwire"
	"lookout/internal/pingwire/pingwiretest"
)

// check compares the outcome of parsing one case with what it wants.
func check(t *testing.T, tc pingwiretest.Case, ev *raftv1.Event, err error) {
	t.Helper()
	if err == nil {
		err = pingwire.MergeEventID(ev, tc.Idem)
	}
	if tc.Err != "" {
		var re *pingwire.RequestError
		if !errors.As(err, &re) || re.Status != http.StatusBadRequest || re.Msg != tc.Err {
			t.Fatalf("error %v, want 400 %q", err, tc.Err)
		}
		return
	}
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if tc.Want != nil && !proto.Equal(ev, tc.Want) {
		t.Fatalf("event\n%v\nwant\n%v", ev, tc.Want)
	}
}

func TestParseJSON(t *testing.T) {
	for _, tc := range pingwiretest.PostCases() {
		t.Run(tc.Name, func(t *testing.T) {
			ev, err := pingwire.ParseJSON([]byte(tc.Body))
			check(t, tc, ev, err)
		})
	}
}

// ParseBody parses every case as ParseJSON does, reading through pooled
// buffers: an event parsed earlier is unchanged after its buffer was
// reused for the next bodies.
func TestParseBody(t *testing.T) {
	parse := func(body string) (*raftv1.Event, error) {
		r := httptest.NewRequest(http.MethodPost, "/ping", strings.NewReader(body))
		return pingwire.ParseBody(httptest.NewRecorder(), r)
	}
	var kept []*raftv1.Event
	var want []*raftv1.Event
	for _, tc := range pingwiretest.PostCases() {
		t.Run(tc.Name, func(t *testing.T) {
			ev, err := parse(tc.Body)
			check(t, tc, ev, err)
			if err == nil {
				kept, want = append(kept, ev), append(want, proto.Clone(ev).(*raftv1.Event))
			}
		})
	}
	for range 3 { // the buffers come back with other bodies
		for _, tc := range pingwiretest.PostCases() {
			parse(tc.Body)
		}
	}
	for i := range kept {
		if !proto.Equal(kept[i], want[i]) {
			t.Fatalf("event %d changed after its buffer was reused:\n%v\nwant\n%v", i, kept[i], want[i])
		}
	}
	_, err := parse(`{"monitor":"m","message":"` + strings.Repeat("x", pingwire.MaxBodyBytes) + `"}`)
	var re *pingwire.RequestError
	if !errors.As(err, &re) || re.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over 1 MiB: %v", err)
	}
}

func TestParseQuery(t *testing.T) {
	for _, tc := range pingwiretest.GetCases() {
		t.Run(tc.Name, func(t *testing.T) {
			u, err := url.Parse(tc.Path)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := pingwire.ParseQuery(strings.TrimPrefix(u.Path, "/ping/"), u.Query())
			check(t, tc, ev, err)
		})
	}
}

func TestParseQueryDefaultsToPing(t *testing.T) {
	ev, err := pingwire.ParseQuery("m", url.Values{"status": {"run"}})
	if err != nil || ev.GetEventType() != "ping" {
		t.Fatalf("%v %v", ev, err)
	}
}
