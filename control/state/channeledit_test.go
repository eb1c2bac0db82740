package state

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

func updateChannelCmd(acct, id, typ, name, config string, isDefault bool) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_UpdateChannel{UpdateChannel: &raftv1.UpdateChannel{
		AccountId: acct, ChannelId: id, Type: typ, Name: name, ConfigJson: []byte(config), IsDefault: isDefault,
	}}})
}

func deleteChannelCmd(acct, id string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_DeleteChannel{DeleteChannel: &raftv1.DeleteChannel{AccountId: acct, ChannelId: id}}})
}

func updateGroupCmd(acct, id, name, channels string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_UpdateNotificationGroup{UpdateNotificationGroup: &raftv1.UpdateNotificationGroup{
		AccountId: acct, GroupId: id, Name: name, ChannelsJson: []byte(channels),
	}}})
}

func deleteGroupCmd(acct, id string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_DeleteNotificationGroup{DeleteNotificationGroup: &raftv1.DeleteNotificationGroup{AccountId: acct, GroupId: id}}})
}

// inGroup puts monitor name of acct (a ping monitor) in group ("": none).
func inGroup(t *testing.T, s *Store, acct, name, group string) {
	t.Helper()
	m := mustMonitor(t, s, acct, name)
	mustOK(t, s, putMonitorsCmd(acct, nil, []*raftv1.MonitorSpec{{
		Uuid: m.GetUuid(), Kind: KindPing, Name: name, Enabled: true, TimeoutSeconds: 3600, NotificationGroup: group,
	}}))
}

// deliveryOf returns the delivery of alert id to ref.
func deliveryOf(t *testing.T, s *Store, id, ref string) *statev1.Delivery {
	t.Helper()
	a, err := s.Alert(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range a.GetDeliveries() {
		if d.GetChannelRef() == ref {
			return d
		}
	}
	t.Fatalf("alert %s has no delivery to %s: %v", id, ref, a.GetDeliveries())
	return nil
}

func wantResult(t *testing.T, res *raftv1.Result, status raftv1.Status, code, msg string) {
	t.Helper()
	if res.GetStatus() != status || res.GetCode() != code || !strings.Contains(res.GetMessage(), msg) {
		t.Fatalf("result %v %q %q, want %v %q containing %q", res.GetStatus(), res.GetCode(), res.GetMessage(), status, code, msg)
	}
}

func TestUpdateChannel(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"), cmd(createChannelCmd("a", "c1", true)))
	mustOK(t, s, updateChannelCmd("a", "c1", "slack", "ops chat", `{"webhook_url":"https://hooks.slack.com/x"}`, false))
	c, err := s.Channel("a", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if c.GetType() != "slack" || c.GetName() != "ops chat" || string(c.GetConfigJson()) != `{"webhook_url":"https://hooks.slack.com/x"}` || c.GetIsDefault() || c.GetCreatedUnixMs() != t0 {
		t.Fatalf("updated channel %v", c)
	}
	// Another account's channel, or none, is not found.
	wantResult(t, apply(t, s, updateChannelCmd("b", "c1", "slack", "x", `{}`, true))[0], raftv1.Status_STATUS_NOT_FOUND, "", "channel c1 not found")
	wantResult(t, apply(t, s, updateChannelCmd("a", "nope", "slack", "x", `{}`, true))[0], raftv1.Status_STATUS_NOT_FOUND, "", "not found")
	wantResult(t, apply(t, s, updateChannelCmd("a", "c1", "", "x", `{}`, true))[0], raftv1.Status_STATUS_INVALID, "", "required")
}

// TestDeleteChannelGivesUpItsDeliveries: deleting a default channel gives
// up its open deliveries at once (recorded, not retried), leaves the
// other channels' alone, and removes its history.
func TestDeleteChannelGivesUpItsDeliveries(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true), createChannelCmd("a", "c2", true))
	first := raise(t, s, "a", "job", t0)
	// c1 failed once and waits an hour to retry; it has a history.
	mustOK(t, s, recordDeliveryCmd(t0+10, &raftv1.RecordDelivery{AlertId: first.GetId(), ChannelRef: "chan:c1", Error: "503 Service Unavailable", NextTryUnixMs: t0 + 3_600_000}))
	if h, _ := s.ChannelHistory("a", "c1"); len(h) != 1 {
		t.Fatalf("history before: %v", h)
	}
	res := apply(t, s, cmd(&raftv1.Command{TimeUnixMs: t0 + 20, Op: &raftv1.Command_DeleteChannel{DeleteChannel: &raftv1.DeleteChannel{AccountId: "a", ChannelId: "c1"}}}))[0]
	if res.GetStatus() != raftv1.Status_STATUS_OK || res.GetDeleted() != 1 {
		t.Fatalf("delete: %v %s, gave up %d", res.GetStatus(), res.GetMessage(), res.GetDeleted())
	}
	if d := deliveryOf(t, s, first.GetId(), "chan:c1"); !d.GetGivenUp() || d.GetLastError() != "channel deleted" || d.GetAttempts() != 1 {
		t.Fatalf("c1's delivery %v", d)
	}
	if d := deliveryOf(t, s, first.GetId(), "chan:c2"); !open(d) {
		t.Fatalf("c2's delivery %v", d)
	}
	// Only c2's delivery is left in the due index, at any time.
	got, _ := due(t, s, t0+86_400_000)
	if len(got) != 1 || got[0] != first.GetId()+"/chan:c2" {
		t.Fatalf("due after delete: %v", got)
	}
	if _, err := s.Channel("a", "c1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("channel after delete: %v", err)
	}
	if h, _ := s.ChannelHistory("a", "c1"); len(h) != 0 {
		t.Fatalf("history after delete: %v", h)
	}
	// c2 delivered: the alert is finished.
	mustOK(t, s, recordDeliveryCmd(t0+30, &raftv1.RecordDelivery{AlertId: first.GetId(), ChannelRef: "chan:c2", Delivered: true}))
	if p, _ := s.PendingAlerts(0); len(p) != 0 {
		t.Fatalf("pending %v", p)
	}
	// A new alert goes to c2 only.
	second := raise(t, s, "a", "other", t0+40)
	if len(second.GetDeliveries()) != 1 || second.GetDeliveries()[0].GetChannelRef() != "chan:c2" {
		t.Fatalf("deliveries after delete: %v", second.GetDeliveries())
	}
	wantResult(t, apply(t, s, deleteChannelCmd("a", "c1"))[0], raftv1.Status_STATUS_NOT_FOUND, "", "channel c1 not found")
}

// TestDeleteChannelFinishesAlerts: an alert whose only open delivery is
// given up is finished (out of the pending set, into the done index).
func TestDeleteChannelFinishesAlerts(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	a := raise(t, s, "a", "job", t0)
	mustOK(t, s, deleteChannelCmd("a", "c1"))
	if p, _ := s.PendingAlerts(0); len(p) != 0 {
		t.Fatalf("pending %v", p)
	}
	if keys := keysWithPrefix(t, s, prefixAlertDone); len(keys) != 1 || !strings.HasSuffix(keys[0], a.GetId()) {
		t.Fatalf("done keys %q", keys)
	}
}

// TestGroupsNameChannels: a group's channel may name an alert channel of
// the account (channel_id); alerts of its monitors go to it, once, and the
// channel cannot be deleted while the group names it.
func TestGroupsNameChannels(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"), createChannelCmd("a", "c1", true), createChannelCmd("a", "c2", false), createChannelCmd("b", "cb", true))
	// Unknown channels, and other accounts', are refused.
	wantResult(t, apply(t, s, createGroup("a", "g0", "bad", []byte(`[{"channel_id":"cb"}]`)))[0], raftv1.Status_STATUS_NOT_FOUND, "", "channels[0]: channel cb not found")
	mustOK(t, s, createGroup("a", "g1", "oncall", []byte(`[{"channel_id":"c2"},{"type":"email","config":{"to":["a@example.com"]}},{"channel_id":"c2"}]`)))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0)))
	inGroup(t, s, "a", "job", "oncall")
	a := raise(t, s, "a", "job", t0+1000)
	refs := []string{}
	for _, d := range a.GetDeliveries() {
		refs = append(refs, d.GetChannelRef()+"/"+d.GetChannelType())
	}
	if len(refs) != 2 || refs[0] != "chan:c2/webhook" || !strings.HasPrefix(refs[1], "group:g1:1:") || !strings.HasSuffix(refs[1], "/email") {
		t.Fatalf("deliveries %v", refs)
	}
	wantResult(t, apply(t, s, deleteChannelCmd("a", "c2"))[0], raftv1.Status_STATUS_CONFLICT, CodeChannelInUse, `notification group "oncall"`)
	if _, err := s.Channel("a", "c2"); err != nil {
		t.Fatalf("the channel is gone after a refused delete: %v", err)
	}
}

// TestUpdateGroup: a group's channels are replaced and the open
// deliveries to channels that changed place are given up, the others
// kept; a group that monitors name keeps its name.
func TestUpdateGroup(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createGroup("a", "g1", "oncall", []byte(`[{"type":"slack","config":{"webhook_url":"https://a"}},{"type":"slack","config":{"webhook_url":"https://b"}}]`)),
		createGroup("a", "g2", "other", nil))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0)))
	inGroup(t, s, "a", "job", "oncall")
	a := raise(t, s, "a", "job", t0+1000)
	if len(a.GetDeliveries()) != 2 {
		t.Fatalf("deliveries %v", a.GetDeliveries())
	}
	keep, drop := a.GetDeliveries()[0].GetChannelRef(), a.GetDeliveries()[1].GetChannelRef()

	wantResult(t, apply(t, s, updateGroupCmd("a", "g1", "renamed", `[]`))[0], raftv1.Status_STATUS_CONFLICT, CodeNotificationGroupInUse, `named by monitor "job"`)
	wantResult(t, apply(t, s, updateGroupCmd("a", "g1", "other", `[]`))[0], raftv1.Status_STATUS_CONFLICT, "", `a notification group named "other" exists`)
	wantResult(t, apply(t, s, updateGroupCmd("a", "nope", "x", `[]`))[0], raftv1.Status_STATUS_NOT_FOUND, "", "not found")
	wantResult(t, apply(t, s, updateGroupCmd("a", "g1", "oncall", `{}`))[0], raftv1.Status_STATUS_INVALID, "", "JSON array")

	res := apply(t, s, updateGroupCmd("a", "g1", "oncall", `[{"type":"slack","config":{"webhook_url":"https://a"}},{"type":"slack","config":{"webhook_url":"https://c"}}]`))[0]
	if res.GetStatus() != raftv1.Status_STATUS_OK || res.GetDeleted() != 1 {
		t.Fatalf("update: %v %s, gave up %d", res.GetStatus(), res.GetMessage(), res.GetDeleted())
	}
	if d := deliveryOf(t, s, a.GetId(), keep); !open(d) {
		t.Fatalf("unchanged channel's delivery %v", d)
	}
	if d := deliveryOf(t, s, a.GetId(), drop); !d.GetGivenUp() || d.GetLastError() != "notification group changed" {
		t.Fatalf("changed channel's delivery %v", d)
	}
	g, err := s.NotificationGroupByName("a", "oncall")
	if err != nil || !strings.Contains(string(g.GetChannelsJson()), "https://c") {
		t.Fatalf("group %v, %v", g, err)
	}
	// Renamed once no monitor names it; the old name is free again.
	inGroup(t, s, "a", "job", "")
	mustOK(t, s, updateGroupCmd("a", "g1", "renamed", `[]`))
	if _, err := s.NotificationGroupByName("a", "oncall"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old name: %v", err)
	}
	if g, err := s.NotificationGroupByName("a", "renamed"); err != nil || g.GetId() != "g1" || string(g.GetChannelsJson()) != "[]" {
		t.Fatalf("new name: %v, %v", g, err)
	}
	mustOK(t, s, createGroup("a", "g3", "oncall", nil))
}

// TestDeleteGroup: a group that monitors name is not deleted (CONFLICT
// naming one); once none does, it is, with its open deliveries given up.
func TestDeleteGroup(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createGroup("a", "g1", "oncall", []byte(`[{"type":"slack","config":{"webhook_url":"https://a"}}]`)))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0), ping("a", "job2", "complete", t0)))
	inGroup(t, s, "a", "job", "oncall")
	inGroup(t, s, "a", "job2", "oncall")
	a := raise(t, s, "a", "job", t0+1000)
	wantResult(t, apply(t, s, deleteGroupCmd("a", "g1"))[0], raftv1.Status_STATUS_CONFLICT, CodeNotificationGroupInUse, `named by monitor "job" and 1 more`)
	inGroup(t, s, "a", "job", "")
	inGroup(t, s, "a", "job2", "")
	res := apply(t, s, deleteGroupCmd("a", "g1"))[0]
	if res.GetStatus() != raftv1.Status_STATUS_OK || res.GetDeleted() != 1 {
		t.Fatalf("delete: %v %s, gave up %d", res.GetStatus(), res.GetMessage(), res.GetDeleted())
	}
	if p, _ := s.PendingAlerts(0); len(p) != 0 {
		t.Fatalf("pending after delete: %v", p)
	}
	if d := a.GetDeliveries()[0]; !deliveryOf(t, s, a.GetId(), d.GetChannelRef()).GetGivenUp() {
		t.Fatal("the group's delivery is not given up")
	}
	if _, err := s.NotificationGroupByName("a", "oncall"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("group after delete: %v", err)
	}
	wantResult(t, apply(t, s, deleteGroupCmd("a", "g1"))[0], raftv1.Status_STATUS_NOT_FOUND, "", "not found")
	mustOK(t, s, createGroup("a", "g2", "oncall", nil)) // the name is free
}

// TestChannelHistory: each attempt is recorded in the channel's history
// (one record per alert, updated in place), newest alert first, with its
// status, and the history keeps the newest MaxChannelHistory.
func TestChannelHistory(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), uncapped("a"), createChannelCmd("a", "c1", true))
	a := raise(t, s, "a", "job", t0)
	mustOK(t, s, recordDeliveryCmd(t0+10, &raftv1.RecordDelivery{AlertId: a.GetId(), ChannelRef: "chan:c1", Error: "503 Service Unavailable", NextTryUnixMs: t0 + 10_000}))
	h, err := s.ChannelHistory("a", "c1")
	if err != nil || len(h) != 1 {
		t.Fatalf("history %v, %v", h, err)
	}
	if r := h[0]; r.GetStatus() != DeliveryRetrying || r.GetError() != "503 Service Unavailable" || r.GetAttempts() != 1 || r.GetMonitorName() != "job" ||
		r.GetAlertType() != "monitor.failed" || r.GetOccurredUnixMs() != t0 || r.GetLastAttemptUnixMs() != t0+10 || r.GetAlertId() != a.GetId() {
		t.Fatalf("record %v", r)
	}
	mustOK(t, s, recordDeliveryCmd(t0+10_010, &raftv1.RecordDelivery{AlertId: a.GetId(), ChannelRef: "chan:c1", Delivered: true}))
	if h, _ := s.ChannelHistory("a", "c1"); len(h) != 1 || h[0].GetStatus() != DeliveryDelivered || h[0].GetError() != "" || h[0].GetAttempts() != 2 {
		t.Fatalf("after delivery %v", h)
	}
	// A receiver that refused for good, and a retry time that ran out.
	b := raise(t, s, "a", "job-b", t0+1)
	mustOK(t, s, recordDeliveryCmd(t0+20, &raftv1.RecordDelivery{AlertId: b.GetId(), ChannelRef: "chan:c1", Error: "404 Not Found", GiveUp: true, Permanent: true}))
	c := raise(t, s, "a", "job-c", t0+2)
	mustOK(t, s, recordDeliveryCmd(t0+30, &raftv1.RecordDelivery{AlertId: c.GetId(), ChannelRef: "chan:c1", Error: "timeout", GiveUp: true}))
	h, _ = s.ChannelHistory("a", "c1")
	var got []string
	for _, r := range h {
		got = append(got, r.GetMonitorName()+":"+r.GetStatus())
	}
	if strings.Join(got, " ") != "job-c:given_up job-b:failed job:delivered" {
		t.Fatalf("history %v", got)
	}
	// Bounded: the newest MaxChannelHistory alerts are kept.
	for i := range MaxChannelHistory + 5 {
		at := t0 + 1000 + int64(i)
		x := raise(t, s, "a", fmt.Sprint("many-", i), at)
		mustOK(t, s, recordDeliveryCmd(at, &raftv1.RecordDelivery{AlertId: x.GetId(), ChannelRef: "chan:c1", Delivered: true}))
	}
	h, _ = s.ChannelHistory("a", "c1")
	if len(h) != MaxChannelHistory || h[0].GetMonitorName() != fmt.Sprint("many-", MaxChannelHistory+4) || h[len(h)-1].GetMonitorName() != "many-5" {
		t.Fatalf("bounded history: %d records, newest %s, oldest %s", len(h), h[0].GetMonitorName(), h[len(h)-1].GetMonitorName())
	}
	if n := len(keysWithPrefix(t, s, historyPrefix("a", "c1"))); n != MaxChannelHistory {
		t.Fatalf("%d history keys", n)
	}
}

// TestAlertsCarryPingTimesAndProblemStart: a ping monitor's alerts carry
// its newest ping and when the run was expected (for a missed run: the
// deadline less the grace), and a recovery carries when the problem it
// ends began and what began it.
func TestAlertsCarryPingTimesAndProblemStart(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0)))
	m := mustMonitor(t, s, "a", "job")
	interval, grace := int64(60), int64(30)
	mustOK(t, s, putMonitorsCmd("a", nil, []*raftv1.MonitorSpec{{
		Uuid: m.GetUuid(), Kind: KindPing, Name: "job", Enabled: true, TimeoutSeconds: 3600, ExpectedIntervalSeconds: &interval, GraceSeconds: &grace,
	}}))
	due := t0 + 90_000
	mustOK(t, s, fireCmd("a", m.GetUuid(), pingstate.DeadlineMissed, due, due+500))
	missed := mustAlert(t, s, m.GetUuid(), pingstate.AlertMissed)
	if missed.GetExpectedUnixMs() != t0+60_000 || missed.GetLastPingUnixMs() != t0 || missed.GetProblemSinceUnixMs() != 0 {
		t.Fatalf("missed alert: expected %d, last ping %d, since %d", missed.GetExpectedUnixMs(), missed.GetLastPingUnixMs(), missed.GetProblemSinceUnixMs())
	}
	// A failure while it is still down does not move the problem's start.
	ingestOK(t, s, ingestAt(t0+100_000, 0, ping("a", "job", "fail", t0+100_000)))
	ingestOK(t, s, ingestAt(t0+700_000, 0, ping("a", "job", "complete", t0+700_000)))
	rec := mustAlert(t, s, m.GetUuid(), pingstate.AlertRecovered)
	if rec.GetProblemSinceUnixMs() != due || rec.GetProblemType() != pingstate.AlertMissed || rec.GetLastPingUnixMs() != t0+700_000 || rec.GetExpectedUnixMs() != t0+760_000 {
		t.Fatalf("recovery: since %d (%s), last ping %d, expected %d", rec.GetProblemSinceUnixMs(), rec.GetProblemType(), rec.GetLastPingUnixMs(), rec.GetExpectedUnixMs())
	}
	if keys := keysWithPrefix(t, s, prefixAlertSince); len(keys) != 0 {
		t.Fatalf("open problems after the recovery: %q", keys)
	}
	// The next problem starts afresh, and goes with the monitor.
	ingestOK(t, s, ingestAt(t0+800_000, 0, ping("a", "job", "fail", t0+800_000)))
	if keys := keysWithPrefix(t, s, prefixAlertSince); len(keys) != 1 {
		t.Fatalf("open problems: %q", keys)
	}
	mustOK(t, s, deleteMonitor("a", m.GetUuid()))
	if keys := keysWithPrefix(t, s, prefixAlertSince); len(keys) != 0 {
		t.Fatalf("open problems after the monitor is deleted: %q", keys)
	}
}

// mustAlert returns monitor id's newest alert of type typ.
func mustAlert(t *testing.T, s *Store, id, typ string) *statev1.Alert {
	t.Helper()
	var found *statev1.Alert
	err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, prefixAlert, func() *statev1.Alert { return new(statev1.Alert) }, func(a *statev1.Alert) error {
			if a.GetMonitorUuid() == id && a.GetType() == typ && (found == nil || a.GetOccurredUnixMs() >= found.GetOccurredUnixMs()) {
				found = a
			}
			return nil
		})
	})
	if err != nil || found == nil {
		t.Fatalf("no %s alert of %s (%v)", typ, id, err)
	}
	return found
}

// The worst cases of the commands that change channels and groups
// (limits_test.go).

// manyAlerts raises n alerts of acct (n monitors failing, in batches),
// each with a message of msg bytes.
func manyAlerts(t *testing.T, s *Store, acct string, n, msg int) {
	t.Helper()
	per := min(IngestBatchMaxEvents, (IngestBatchMaxBytes-4096)/(msg+256))
	for b := 0; b < n; b += per {
		evs := make([]*raftv1.Event, min(per, n-b))
		for i := range evs {
			evs[i] = ping(acct, fmt.Sprint("job-", b+i), "fail", t0, func(e *raftv1.Event) { e.Message = long(msg) })
		}
		ingestOK(t, s, ingestAt(t0, 0, evs...))
	}
}

// fullChannelHistory records a delivery to channel id for
// MaxChannelHistory open alerts, but the alert skip.
func fullChannelHistory(t *testing.T, s *Store, id string, skip ...string) {
	t.Helper()
	pending, err := s.PendingAlerts(0)
	pending = slices.DeleteFunc(pending, func(a *statev1.Alert) bool { return slices.Contains(skip, a.GetId()) })
	if err != nil || len(pending) < MaxChannelHistory {
		t.Fatalf("%d pending alerts, %v", len(pending), err)
	}
	records := make([]*raftv1.Command, MaxChannelHistory)
	for i, a := range pending[:MaxChannelHistory] {
		records[i] = recordDeliveryCmd(t0+1, &raftv1.RecordDelivery{AlertId: a.GetId(), ChannelRef: "chan:" + id, Error: long(503), NextTryUnixMs: t0 + 60_000})
	}
	mustOK(t, s, records...)
}

func channelWorstCases() map[string]worstCase {
	return map[string]worstCase{
		"update_channel": {
			setup: func(t *testing.T, s *Store) { mustOK(t, s, createChannelCmd("a", "c", true)) },
			worst: func(*testing.T, *Store) *raftv1.Command {
				return updateChannelCmd("a", "c", "webhook", wide(100), fmt.Sprintf(`{"url":"https://example.com/%s"}`, long(MaxCommandBytes-2048)), true)
			},
			want: raftv1.Status_STATUS_OK,
			over: updateChannelCmd("a", long(MaxKeyPartBytes+1), "webhook", "n", `{}`, true),
		},
		// Many small alerts to give up (the bound on writes), the channel's
		// full history to delete.
		"delete_channel": {
			setup: func(t *testing.T, s *Store) {
				mustOK(t, s, uncapped("a"), createChannelCmd("a", "c", true))
				manyAlerts(t, s, "a", MaxGiveUpWrites+10, 0)
				fullChannelHistory(t, s, "c")
			},
			worst: func(*testing.T, *Store) *raftv1.Command { return deleteChannelCmd("a", "c") },
			want:  raftv1.Status_STATUS_OK,
			over:  deleteChannelCmd(long(MaxKeyPartBytes+1), "c"),
		},
		// Large alerts (the longest messages, a delivery per channel of the
		// account) to give up: the bound on bytes.
		"delete_channel/large": {
			setup: func(t *testing.T, s *Store) {
				mustOK(t, s, uncapped("a"))
				mustOK(t, s, createDefaultChannels("a", MaxAccountChannels)...)
				manyAlerts(t, s, "a", 2*MaxChannelHistory, 64<<10)
				fullChannelHistory(t, s, "c0")
			},
			worst: func(*testing.T, *Store) *raftv1.Command { return deleteChannelCmd("a", "c0") },
			want:  raftv1.Status_STATUS_OK,
			over:  deleteChannelCmd("a", long(MaxKeyPartBytes+1)),
		},
		// The longest channels; every open delivery of the group's alerts
		// goes to a channel that changes.
		"update_notification_group": {
			setup: func(t *testing.T, s *Store) {
				mustOK(t, s, uncapped("a"), createGroup("a", "g", "g", groupChannels(MaxGroupChannels, 4096)))
				manyAlerts(t, s, "a", 64, 0)
				for i := range 64 {
					inGroup(t, s, "a", fmt.Sprint("job-", i), "g")
				}
				manyAlerts(t, s, "a", 64, 0) // fail again: no alert while failed
				for i := range 64 {
					ingestOK(t, s, ingestAt(t0+1, 0, ping("a", fmt.Sprint("job-", i), "complete", t0+1)))
				}
			},
			worst: func(*testing.T, *Store) *raftv1.Command {
				return updateGroupCmd("a", "g", "g", string(groupChannels(MaxGroupChannels, MaxCommandBytes-2048)))
			},
			want: raftv1.Status_STATUS_OK,
			over: updateGroupCmd("a", "g", wide(MaxKeyPartBytes), "[]"),
		},
		// A group of many monitors' alerts, named by no monitor any more.
		"delete_notification_group": {
			setup: func(t *testing.T, s *Store) {
				mustOK(t, s, uncapped("a"), createGroup("a", "g", "g", groupChannels(MaxGroupChannels, 4096)))
				manyAlerts(t, s, "a", 64, 0)
				for i := range 64 {
					inGroup(t, s, "a", fmt.Sprint("job-", i), "g")
					ingestOK(t, s, ingestAt(t0+1, 0, ping("a", fmt.Sprint("job-", i), "complete", t0+1)))
					ingestOK(t, s, ingestAt(t0+2, 0, ping("a", fmt.Sprint("job-", i), "fail", t0+2)))
					inGroup(t, s, "a", fmt.Sprint("job-", i), "")
				}
			},
			worst: func(*testing.T, *Store) *raftv1.Command { return deleteGroupCmd("a", "g") },
			want:  raftv1.Status_STATUS_OK,
			over:  deleteGroupCmd("a", long(MaxKeyPartBytes+1)),
		},
	}
}
