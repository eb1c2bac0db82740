package alert

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lookout/control/alert/channel/webhook"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// noPending reports whether the outbox is empty.
func (e *env) noPending() bool { return len(e.pendingIDs()) == 0 }

func TestDeliversOnceAndRecords(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	e.defaultChannel("ch-1", webhook.Type, r.config())
	a := e.fail("backup")
	if len(a.GetDeliveries()) != 1 || a.GetDeliveries()[0].GetChannelRef() != "chan:ch-1" || a.GetType() != "monitor.failed" {
		t.Fatalf("raised alert: %v", a)
	}
	e.start(DispatcherOptions{PanelURL: "https://lookout.example/"})
	e.waitFor("the outbox to empty", e.noPending)
	settle()
	if got := r.ids(); !slices.Equal(got, []string{a.GetId()}) {
		t.Fatalf("receiver got %v, want [%s]", got, a.GetId())
	}
	if d := e.delivery(a.GetId(), "chan:ch-1"); !d.GetDelivered() || d.GetAttempts() != 1 || d.GetGivenUp() {
		t.Errorf("delivery: %v", d)
	}
	p := r.last()
	if p.Type != "monitor.failed" || p.Account.ID != acct || p.Monitor.Name != "backup" || p.Monitor.Kind != "ping" ||
		p.Monitor.UUID != a.GetMonitorUuid() || p.PanelURL != "https://lookout.example/monitors/"+a.GetMonitorUuid() {
		t.Errorf("payload: %+v", p)
	}
	if p.Event == nil || p.Event.Status != "fail" || p.Event.Message != "disk full" || p.Event.ExitCode == nil || *p.Event.ExitCode != 3 {
		t.Errorf("payload event: %+v", p.Event)
	}
}

func TestRetriesWithBackoff(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, 500, 500)
	e.defaultChannel("ch-1", webhook.Type, r.config())
	a := e.fail("backup")
	var mu sync.Mutex
	var attempts []int
	e.start(DispatcherOptions{Backoff: func(n int) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		attempts = append(attempts, n)
		return time.Hour
	}})
	for i := 1; i <= 2; i++ {
		e.waitFor("a failed attempt recorded", func() bool { return e.delivery(a.GetId(), "chan:ch-1").GetAttempts() == int64(i) })
		settle()
		d := e.delivery(a.GetId(), "chan:ch-1")
		if r.count() != i || d.GetNextTryUnixMs() != e.now().Add(time.Hour).UnixMilli() || !strings.Contains(d.GetLastError(), "500") {
			t.Fatalf("after attempt %d: receiver got %d, delivery %v", i, r.count(), d)
		}
		e.advance(time.Hour)
	}
	e.waitFor("the outbox to empty", e.noPending)
	if got := r.ids(); !slices.Equal(got, []string{a.GetId(), a.GetId(), a.GetId()}) {
		t.Errorf("receiver got %v", got)
	}
	if d := e.delivery(a.GetId(), "chan:ch-1"); !d.GetDelivered() || d.GetAttempts() != 3 || d.GetLastError() != "" {
		t.Errorf("delivery: %v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(attempts, []int{1, 2}) {
		t.Errorf("backoff asked for attempts %v, want [1 2]", attempts)
	}
}

func TestPermanentErrorGivesUp(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, 400)
	e.defaultChannel("ch-1", webhook.Type, r.config())
	a := e.fail("backup")
	e.start(DispatcherOptions{Backoff: func(int) time.Duration { return time.Millisecond }})
	e.waitFor("the outbox to empty", e.noPending)
	settle()
	d := e.delivery(a.GetId(), "chan:ch-1")
	if r.count() != 1 || !d.GetGivenUp() || d.GetDelivered() || d.GetAttempts() != 1 || !strings.Contains(d.GetLastError(), "400") ||
		strings.HasPrefix(d.GetLastError(), "permanent") {
		t.Errorf("receiver got %d, delivery %v", r.count(), d)
	}
}

func TestUnusableChannelGivesUp(t *testing.T) {
	e := newEnv(t)
	e.defaultChannel("ch-1", webhook.Type, []byte(`{"secret":"`+secret+`"}`)) // no url
	a := e.fail("backup")
	e.start(DispatcherOptions{})
	e.waitFor("the outbox to empty", e.noPending)
	if d := e.delivery(a.GetId(), "chan:ch-1"); !d.GetGivenUp() || !strings.Contains(d.GetLastError(), "url") {
		t.Errorf("delivery: %v", d)
	}
}

func TestMaxRetryTimeGivesUp(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t, 500, 500, 500, 500, 500, 500)
	e.defaultChannel("ch-1", webhook.Type, r.config())
	a := e.fail("backup")
	// Tries at 0, 1 h and 2 h (the next is due at the 2.5 h limit); the
	// fourth, at 3 h, is past the limit and gives up.
	e.start(DispatcherOptions{MaxRetryTime: 150 * time.Minute, Backoff: func(int) time.Duration { return time.Hour }})
	for i := int64(1); i <= 3; i++ {
		e.waitFor("a failed attempt recorded", func() bool { return e.delivery(a.GetId(), "chan:ch-1").GetAttempts() == i })
		e.advance(time.Hour)
	}
	e.waitFor("the outbox to empty", e.noPending)
	settle()
	d := e.delivery(a.GetId(), "chan:ch-1")
	if r.count() != 4 || !d.GetGivenUp() || d.GetAttempts() != 4 {
		t.Errorf("receiver got %d, delivery %v", r.count(), d)
	}
}

func TestFailoverResumesUndelivered(t *testing.T) {
	e := newEnv(t)
	ok, slow := newReceiver(t), newReceiver(t)
	slow.hold = true
	e.defaultChannel("ch-a", webhook.Type, ok.config())
	e.defaultChannel("ch-b", webhook.Type, slow.config())
	a := e.fail("backup")
	stop := e.start(DispatcherOptions{})
	e.waitFor("the first delivery", func() bool { return e.delivery(a.GetId(), "chan:ch-a").GetDelivered() })
	<-slow.held
	stop() // leadership lost while the second is under way
	if d := e.delivery(a.GetId(), "chan:ch-b"); d.GetAttempts() != 0 || d.GetDelivered() {
		t.Fatalf("interrupted delivery recorded: %v", d)
	}
	e.start(DispatcherOptions{}) // the next leader
	e.waitFor("the outbox to empty", e.noPending)
	settle()
	if ok.count() != 1 || slow.count() != 2 {
		t.Errorf("receivers got %v and %v, want one alert and two tries", ok.ids(), slow.ids())
	}
	if d := e.delivery(a.GetId(), "chan:ch-b"); !d.GetDelivered() || d.GetAttempts() != 1 {
		t.Errorf("delivery: %v", d)
	}
}

func TestRecordFailureRetriesDelivery(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	e.defaultChannel("ch-1", webhook.Type, r.config())
	a := e.fail("backup")
	e.cluster.FailApply(errors.New("no leader"))
	e.start(DispatcherOptions{Backoff: func(int) time.Duration { return time.Hour }})
	e.waitFor("a delivery", func() bool { return r.count() == 1 })
	settle()
	if r.count() != 1 {
		t.Fatalf("sent %d times while the record waits", r.count())
	}
	e.cluster.FailApply(nil)
	e.advance(time.Hour)
	e.waitFor("the outbox to empty", e.noPending)
	if got := r.ids(); !slices.Equal(got, []string{a.GetId(), a.GetId()}) {
		t.Errorf("receiver got %v: at least once, with the same id", got)
	}
}

func TestGroupRouting(t *testing.T) {
	e := newEnv(t)
	def, grp := newReceiver(t), newReceiver(t)
	e.defaultChannel("ch-1", webhook.Type, def.config())
	e.apply(&raftv1.Command{Op: &raftv1.Command_CreateNotificationGroup{CreateNotificationGroup: &raftv1.CreateNotificationGroup{
		AccountId: acct, GroupId: "grp-1", Name: "oncall", ChannelsJson: groupChannels(grp),
	}}})
	e.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: acct, Creates: []*raftv1.MonitorSpec{{
		Uuid: "5b0c7a53-0d7e-4b43-9c55-0d6f8e1f2a10", Kind: "ping", Name: "backup", Enabled: true,
		DisplayName: "Nightly backup", Tags: []string{"db"}, NotificationGroup: "oncall",
	}}}}})
	a := e.fail("backup")
	if len(a.GetDeliveries()) != 1 || !strings.HasPrefix(a.GetDeliveries()[0].GetChannelRef(), "group:grp-1:0:") {
		t.Fatalf("deliveries: %v", a.GetDeliveries())
	}
	e.start(DispatcherOptions{})
	e.waitFor("the outbox to empty", e.noPending)
	settle()
	if def.count() != 0 || grp.count() != 1 {
		t.Fatalf("default channel got %v, group channel %v", def.ids(), grp.ids())
	}
	if p := grp.last(); p.ID != a.GetId() || p.Monitor.DisplayName != "Nightly backup" || !slices.Equal(p.Monitor.Tags, []string{"db"}) {
		t.Errorf("payload: %+v", p)
	}
}

func TestMonitorGoneStillSends(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	e.defaultChannel("ch-1", webhook.Type, r.config())
	a := e.fail("backup")
	e.apply(&raftv1.Command{Op: &raftv1.Command_DeleteMonitor{DeleteMonitor: &raftv1.DeleteMonitor{AccountId: acct, MonitorUuid: a.GetMonitorUuid()}}})
	if !e.pendingIDs()[a.GetId()] {
		t.Skip("deleting the monitor dropped its alerts")
	}
	e.start(DispatcherOptions{})
	e.waitFor("the outbox to empty", e.noPending)
	if p := r.last(); p.ID != a.GetId() || p.Monitor.UUID != a.GetMonitorUuid() || p.Monitor.Name != "backup" {
		t.Errorf("payload: %+v", p)
	}
}

func TestConcurrencyIsBounded(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var cur, most, total int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		cur++
		total++
		most = max(most, cur)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		cur--
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	e.defaultChannel("ch-1", webhook.Type, []byte(`{"url":"`+srv.URL+`","secret":"`+secret+`"}`))
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		e.fail(name)
	}
	e.start(DispatcherOptions{Concurrency: 2})
	e.waitFor("the outbox to empty", e.noPending)
	mu.Lock()
	defer mu.Unlock()
	if most != 2 || total != 6 {
		t.Errorf("at most %d requests at once (want 2), %d in all (want 6)", most, total)
	}
}
