package state

import (
	"bytes"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestChannelsGenerationMovesWithChannelsAndGroups: pings and delivery
// records leave the channels generation; a channel or notification group
// written, and a restore, move it.
func TestChannelsGenerationMovesWithChannelsAndGroups(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	gen := s.ChannelsGeneration()
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "fail", t0)))
	if s.ChannelsGeneration() != gen {
		t.Fatal("a ping moved the channels generation")
	}
	for _, c := range []*raftv1.Command{
		createChannelCmd("a", "c2", false),
		cmd(&raftv1.Command{Op: &raftv1.Command_CreateNotificationGroup{CreateNotificationGroup: &raftv1.CreateNotificationGroup{
			AccountId: "a", GroupId: "g1", Name: "oncall", ChannelsJson: []byte(`[{"type":"webhook","name":"h","config":{"url":"https://example.com/h","secret":"whsec_c2VjcmV0"}}]`)}}}),
		cmd(&raftv1.Command{Op: &raftv1.Command_DeleteChannel{DeleteChannel: &raftv1.DeleteChannel{AccountId: "a", ChannelId: "c2"}}}),
	} {
		mustOK(t, s, c)
		if s.ChannelsGeneration() == gen {
			t.Fatalf("%T did not move the channels generation", c.GetOp())
		}
		gen = s.ChannelsGeneration()
	}
	snap := dump(t, s)
	if err := s.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if s.ChannelsGeneration() == gen {
		t.Fatal("a restore did not move the channels generation")
	}
}
