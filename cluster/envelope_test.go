package cluster

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// envelope copies every field of a command, unknown ones too, and
// stamping the copy leaves the original as it was.
func TestEnvelopeIsACopyToStamp(t *testing.T) {
	cmd := &raftv1.Command{Version: 1, RequestId: "rid", TimeUnixMs: 5, Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{
		RetentionCount: 50, Events: []*raftv1.Event{{AccountId: "a", Monitor: "m", EventType: "ping"}},
	}}}
	cmd.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 7))
	want := proto.Clone(cmd)
	c := envelope(cmd)
	if !proto.Equal(c, want) {
		t.Fatalf("envelope\n%v\nwant\n%v", c, want)
	}
	c.Version, c.RequestId, c.TimeUnixMs = 2, "other", 9
	if !proto.Equal(cmd, want) {
		t.Fatalf("stamping the envelope changed the command: %v", cmd)
	}
	a, err := proto.MarshalOptions{Deterministic: true}.Marshal(envelope(cmd))
	b, err2 := proto.MarshalOptions{Deterministic: true}.Marshal(want)
	if err != nil || err2 != nil || string(a) != string(b) {
		t.Fatalf("encoded envelope differs: %v %v", err, err2)
	}
}
