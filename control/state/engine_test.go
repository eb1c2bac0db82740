package state

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

func createChannelCmd(acct, id string, isDefault bool) *raftv1.Command {
	return &raftv1.Command{Version: CommandVersion, Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: acct, ChannelId: id, Type: "webhook", Name: id, ConfigJson: []byte(`{"url":"https://example.com/hook","secret":"whsec_c2VjcmV0"}`), IsDefault: isDefault,
	}}}
}

func fireCmd(acct, mon, kind string, due, now int64) *raftv1.Command {
	return &raftv1.Command{Version: CommandVersion, TimeUnixMs: now, Op: &raftv1.Command_FireDeadline{FireDeadline: &raftv1.FireDeadline{
		AccountId: acct, MonitorUuid: mon, Kind: kind, DueUnixMs: due,
	}}}
}

func TestPingsRaiseAlertsRoutedToDefaultChannels(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true), createChannelCmd("a", "c2", false))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "run", t0), ping("a", "job", "fail", t0+1000)))
	m := mustMonitor(t, s, "a", "job")
	if st := PingState(m); st.State != pingstate.Failed || !st.Alerting || st.LastAlert != pingstate.AlertFailed {
		t.Fatalf("engine state %+v", st)
	}
	pending, err := s.PendingAlerts(0)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending %v %v", pending, err)
	}
	a := pending[0]
	if a.GetType() != pingstate.AlertFailed || a.GetMonitorUuid() != m.GetUuid() || len(a.GetDeliveries()) != 1 || a.GetDeliveries()[0].GetChannelRef() != "chan:c1" || a.GetEvent().GetEvent().GetStatus() != "fail" {
		t.Fatalf("alert %v", a)
	}
	// A second fail is the same state: no second alert.
	ingestOK(t, s, ingestAt(t0+2000, 0, ping("a", "job", "fail", t0+2000)))
	if pending, _ := s.PendingAlerts(0); len(pending) != 1 {
		t.Fatalf("%d pending after a second fail", len(pending))
	}
	// Delivered: the alert leaves the pending set; a repeat record is a no-op.
	rec := &raftv1.Command{Version: CommandVersion, Op: &raftv1.Command_RecordDelivery{RecordDelivery: &raftv1.RecordDelivery{AlertId: a.GetId(), ChannelRef: "chan:c1", Delivered: true}}}
	mustOK(t, s, rec, rec)
	if pending, _ := s.PendingAlerts(0); len(pending) != 0 {
		t.Fatalf("%d pending after delivery", len(pending))
	}
	if got, err := s.Alert(a.GetId()); err != nil || got.GetDeliveries()[0].GetAttempts() != 1 || !got.GetDeliveries()[0].GetDelivered() {
		t.Fatalf("recorded %v %v", got, err)
	}
}

func TestGroupRoutingAndNoChannels(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true), &raftv1.Command{Version: CommandVersion, Op: &raftv1.Command_CreateNotificationGroup{CreateNotificationGroup: &raftv1.CreateNotificationGroup{
		AccountId: "a", GroupId: "g1", Name: "oncall", ChannelsJson: []byte(`[{"type":"slack","config":{}},{"type":"email","config":{}}]`),
	}}})
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0)))
	m := mustMonitor(t, s, "a", "job")
	m.NotificationGroup = "oncall"
	mustOK(t, s, &raftv1.Command{Version: CommandVersion, Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "a", Updates: []*raftv1.MonitorSpec{{
		Uuid: m.GetUuid(), Kind: "ping", Name: "job", Enabled: true, TimeoutSeconds: 3600, NotificationGroup: "oncall",
	}}}}})
	ingestOK(t, s, ingestAt(t0+1000, 0, ping("a", "job", "fail", t0+1000)))
	pending, _ := s.PendingAlerts(0)
	if len(pending) != 1 || len(pending[0].GetDeliveries()) != 2 || !strings.HasPrefix(pending[0].GetDeliveries()[1].GetChannelRef(), "group:g1:1:") || pending[0].GetDeliveries()[1].GetChannelType() != "email" {
		t.Fatalf("group routing: %v", pending)
	}
	// An account without channels keeps the alert, with nothing to send.
	mustOK(t, s, newAccount("b"))
	ingestOK(t, s, ingestAt(t0, 0, ping("b", "job", "fail", t0)))
	if p, _ := s.PendingAlerts(0); len(p) != 1 {
		t.Fatalf("an alert without channels is pending: %d", len(p))
	}
}

func TestFireDeadlineOnceAndStale(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0)))
	m := mustMonitor(t, s, "a", "job")
	interval, grace := int64(60), int64(30)
	mustOK(t, s, &raftv1.Command{Version: CommandVersion, Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "a", Updates: []*raftv1.MonitorSpec{{
		Uuid: m.GetUuid(), Kind: "ping", Name: "job", Enabled: true, TimeoutSeconds: 3600, ExpectedIntervalSeconds: &interval, GraceSeconds: &grace,
	}}}}})
	m = mustMonitor(t, s, "a", "job")
	_, _, due := pingstate.Deadlines(PingSettings(m), PingState(m))
	if due != t0+90_000 {
		t.Fatalf("missed deadline %d, want %d", due, t0+90_000)
	}
	if res := apply(t, s, fireCmd("a", m.GetUuid(), pingstate.DeadlineMissed, due-1, due))[0]; !res.GetStale() {
		t.Fatalf("a deadline that is not the monitor's fired: %v", res)
	}
	mustOK(t, s, fireCmd("a", m.GetUuid(), pingstate.DeadlineMissed, due, due+500))
	if res := apply(t, s, fireCmd("a", m.GetUuid(), pingstate.DeadlineMissed, due, due+900))[0]; !res.GetStale() {
		t.Fatalf("a deadline fired twice: %v", res)
	}
	pending, _ := s.PendingAlerts(0)
	if len(pending) != 1 || pending[0].GetType() != pingstate.AlertMissed || pending[0].GetOccurredUnixMs() != due {
		t.Fatalf("missed alert: %v", pending)
	}
	if st := PingState(mustMonitor(t, s, "a", "job")); st.State != pingstate.Down {
		t.Fatalf("state %+v", st)
	}
	// The expected run is in the history as missed, at the deadline.
	events, err := s.Events("a", m.GetUuid(), 1)
	if err != nil || len(events) != 1 || events[0].GetEvent().GetEventType() != EventMissed || events[0].GetEventTimeUnixMs() != due || events[0].GetColor() != ColorRed {
		t.Fatalf("history: %v %v", events, err)
	}
	if pending[0].GetEvent().GetEvent().GetEventType() != EventMissed {
		t.Fatalf("the alert does not carry the missed run: %v", pending[0])
	}
	if res := apply(t, s, fireCmd("b", m.GetUuid(), pingstate.DeadlineMissed, due, due))[0]; res.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("another account's monitor: %v", res)
	}
	var all []*statev1.Monitor
	s.PingMonitors(func(m *statev1.Monitor) error { all = append(all, m); return nil })
	if len(all) != 1 {
		t.Fatalf("PingMonitors: %d", len(all))
	}
}

func TestWatchReportsChangedMonitorsAndAlerts(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "before", "complete", t0)))
	if ids, over, alerts := s.TakeChanges(); len(ids) != 0 || over || alerts {
		t.Fatal("changes recorded while not watching")
	}
	s.Watch(true)
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "fail", t0)))
	select {
	case <-s.Changed():
	default:
		t.Fatal("no change signalled")
	}
	ids, over, alerts := s.TakeChanges()
	if len(ids) != 1 || ids[0] != mustMonitor(t, s, "a", "job").GetUuid() || over || !alerts {
		t.Fatalf("changes %v %v %v", ids, over, alerts)
	}
	snap := dump(t, s)
	if err := s.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if _, over, _ := s.TakeChanges(); !over {
		t.Fatal("a restore does not ask for a full reread")
	}
}

func TestMonitorChangesCarryTheCommittedRecord(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	feed := s.NewFeed()
	s.Watch(true)
	feed.Watch(true)
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "run", t0)))
	ingestOK(t, s, ingestAt(t0+1000, 0, ping("a", "job", "fail", t0+1000)))
	stored := mustMonitor(t, s, "a", "job")
	changes, over, _ := s.TakeMonitorChanges()
	if len(changes) != 1 || over || changes[0].UUID != stored.GetUuid() {
		t.Fatalf("changes %v overflow %v", changes, over)
	}
	m, err := changes[0].Monitor()
	if err != nil {
		t.Fatal(err)
	}
	if k := changes[0].Kind(); k != KindPing {
		t.Fatalf("Kind() = %q, want %q", k, KindPing)
	}
	// The newest entry's record, as a read of the state gives it.
	if !proto.Equal(m, stored) || m.GetPing().GetLastStatus() != "fail" {
		t.Fatalf("record %v, state %v", m, stored)
	}
	// A further reader (the check scheduler's feed) gets the same record.
	fromFeed, _, _ := feed.TakeMonitorChanges()
	if len(fromFeed) != 1 {
		t.Fatalf("feed changes %v", fromFeed)
	}
	if fm, err := fromFeed[0].Monitor(); err != nil || !proto.Equal(fm, stored) {
		t.Fatalf("feed record %v %v", fm, err)
	}
	mustOK(t, s, deleteMonitor("a", stored.GetUuid()))
	changes, _, _ = s.TakeMonitorChanges()
	if len(changes) != 1 || changes[0].UUID != stored.GetUuid() {
		t.Fatalf("changes after delete %v", changes)
	}
	if _, err := changes[0].Monitor(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted monitor's change: %v", err)
	}
	if k := changes[0].Kind(); k != "" {
		t.Fatalf("deleted monitor's Kind() = %q", k)
	}
}

// TestMonitorChangeKind reads the kind, account and name of records
// without decoding them: as a decode gives them, and "" for a record that
// cannot be read.
func TestMonitorChangeKind(t *testing.T) {
	for _, m := range []*statev1.Monitor{
		{Uuid: "u1", AccountId: "a", Kind: "http_check", Name: "web", Enabled: true, Tags: []string{"x"}},
		{Uuid: "u2", Kind: KindPing, Ping: &statev1.PingState{NextSeq: 7, LastStatus: "run"}},
		{Uuid: "u3"},
	} {
		rec, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		ch := MonitorChange{UUID: m.GetUuid(), record: rec, present: true}
		if k := ch.Kind(); k != m.GetKind() {
			t.Errorf("%s: Kind() = %q, want %q", m.GetUuid(), k, m.GetKind())
		}
		if a, n := ch.accountID(), ch.stringField(monitorNameField); a != m.GetAccountId() || n != m.GetName() {
			t.Errorf("%s: account %q and name %q, want %q and %q", m.GetUuid(), a, n, m.GetAccountId(), m.GetName())
		}
	}
	// A kind field cut short.
	cut := protowire.AppendVarint(protowire.AppendTag(nil, monitorKindField, protowire.BytesType), 10)
	if k := (MonitorChange{record: append(cut, "http"...), present: true}).Kind(); k != "" {
		t.Errorf("a cut record gave the kind %q", k)
	}
}
