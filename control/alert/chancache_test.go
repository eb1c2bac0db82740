package alert

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/webhook"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestChannelIsMadeOnceUntilChannelsChange: the dispatcher makes a
// channel once for the deliveries to it, keeps it across entries that
// write no channel, and makes it again from its new config once the
// channel is updated; a channel deleted, or a group's channel changed, is
// given up at once.
func TestChannelIsMadeOnceUntilChannelsChange(t *testing.T) {
	e := newEnv(t)
	r1, r2 := newReceiver(t), newReceiver(t)
	var made atomic.Int32
	registry := channel.NewRegistry(map[string]channel.Factory{webhook.Type: webhook.New}, channel.Deps{HTTP: &http.Client{}})
	d := e.dispatcher(DispatcherOptions{Channels: ChannelsFunc(func(typ string, config json.RawMessage) (channel.Channel, error) {
		made.Add(1)
		return registry.New(typ, config)
	})})
	e.defaultChannel("ch-1", webhook.Type, r1.config())
	send := func(want *receiver) {
		t.Helper()
		before := want.count()
		_, ch, err := d.channel(acct, "chan:ch-1")
		if err != nil {
			t.Fatal(err)
		}
		if err := ch.Send(context.Background(), channel.Alert{ID: "al-1", Type: channel.MonitorFailed, OccurredAt: time.Now(), AccountID: acct}); err != nil {
			t.Fatal(err)
		}
		if want.count() != before+1 {
			t.Fatalf("the channel did not send to the receiver of its config")
		}
	}
	send(r1)
	e.fail("backup") // an entry that writes no channel
	send(r1)
	if n := made.Load(); n != 1 {
		t.Fatalf("the channel was made %d times for two deliveries, want once", n)
	}

	e.apply(&raftv1.Command{Op: &raftv1.Command_UpdateChannel{UpdateChannel: &raftv1.UpdateChannel{
		AccountId: acct, ChannelId: "ch-1", Type: webhook.Type, Name: "ch-1", ConfigJson: r2.config(), IsDefault: true}}})
	send(r2)
	if n := made.Load(); n != 2 {
		t.Fatalf("made %d times, want again after the update", n)
	}

	e.apply(&raftv1.Command{Op: &raftv1.Command_DeleteChannel{DeleteChannel: &raftv1.DeleteChannel{AccountId: acct, ChannelId: "ch-1"}}})
	if _, _, err := d.channel(acct, "chan:ch-1"); !channel.IsPermanent(err) || !errors.Is(err, errRemoved) {
		t.Fatalf("a deleted channel: %v, want permanent %v", err, errRemoved)
	}

	channels := groupChannels(r1)
	e.apply(&raftv1.Command{Op: &raftv1.Command_CreateNotificationGroup{CreateNotificationGroup: &raftv1.CreateNotificationGroup{
		AccountId: acct, GroupId: "grp-1", Name: "oncall", ChannelsJson: channels}}})
	ref := "group:grp-1:0:" + state.GroupChannelHash(channels[1:len(channels)-1])
	if _, _, err := d.channel(acct, ref); err != nil {
		t.Fatal(err)
	}
	e.apply(&raftv1.Command{Op: &raftv1.Command_UpdateNotificationGroup{UpdateNotificationGroup: &raftv1.UpdateNotificationGroup{
		AccountId: acct, GroupId: "grp-1", Name: "oncall", ChannelsJson: groupChannels(r2)}}})
	if _, _, err := d.channel(acct, ref); !channel.IsPermanent(err) || !errors.Is(err, errChanged) {
		t.Fatalf("a group's channel changed: %v, want permanent %v", err, errChanged)
	}
}
