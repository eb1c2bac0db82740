package alert

import (
	"errors"
	"testing"

	"lookout/control/alert/channel"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestGroupRefChecksTheChannel: a delivery to a group's channel names the
// channel's place and hash; once the channel at that place is another
// (the group changed), the delivery is given up rather than sent to it.
func TestGroupRefChecksTheChannel(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	channels := groupChannels(r)
	e.apply(&raftv1.Command{Op: &raftv1.Command_CreateNotificationGroup{CreateNotificationGroup: &raftv1.CreateNotificationGroup{
		AccountId: acct, GroupId: "grp-1", Name: "oncall", ChannelsJson: channels,
	}}})
	d := e.dispatcher(DispatcherOptions{})
	hash := state.GroupChannelHash(channels[1 : len(channels)-1]) // the one object of the array
	if typ, _, err := d.channel(acct, "group:grp-1:0:"+hash); err != nil || typ != "webhook" {
		t.Errorf("%q, %v", typ, err)
	}
	for ref, want := range map[string]error{
		"group:grp-1:0:00000000": errChanged,
		"group:grp-1:1:" + hash:  errRemoved,
		"group:grp-2:0:" + hash:  errRemoved,
	} {
		_, _, err := d.channel(acct, ref)
		if !channel.IsPermanent(err) || !errors.Is(err, want) {
			t.Errorf("%s: %v, want permanent %v", ref, err, want)
		}
	}
}
