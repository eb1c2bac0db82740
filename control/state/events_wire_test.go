package state

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// storedReceived decodes two fields by hand; it must read what the
// generated code reads, for every shape of stored event.
func TestStoredReceivedAgreesWithTheGeneratedCode(t *testing.T) {
	for _, se := range []*statev1.StoredEvent{
		{},
		{Seq: 7},
		{Seq: 7, Event: &raftv1.Event{}},
		{Seq: 7, Event: &raftv1.Event{ReceivedUnixMs: 1_773_577_800_123}},
		{Seq: 1 << 40, Color: ColorRed, EventTimeUnixMs: 5, Event: &raftv1.Event{
			AccountId: "a", Monitor: "m", EventType: "ping", Status: "fail", Message: strings.Repeat("x", 64<<10),
			ReceivedUnixMs: 42, Series: "s", EventId: "e", Host: "h", Project: "p",
		}},
		{Event: &raftv1.Event{ReceivedUnixMs: -1}},
	} {
		v, err := proto.MarshalOptions{Deterministic: true}.Marshal(se)
		if err != nil {
			t.Fatal(err)
		}
		got, err := storedReceived(v)
		if err != nil || got != se.GetEvent().GetReceivedUnixMs() {
			t.Errorf("storedReceived = %d, %v; the generated code reads %d", got, err, se.GetEvent().GetReceivedUnixMs())
		}
	}
	if _, err := storedReceived([]byte{0x12, 0x05, 0x60}); err == nil {
		t.Error("a truncated event was read")
	}
}
