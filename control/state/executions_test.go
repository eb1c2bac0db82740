package state

import (
	"strings"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

const checkID = "11111111-2222-4333-8444-555555555555"

// putCheck creates (or replaces) an enabled check of kind on account a.
func putCheck(t *testing.T, s *Store, kind string, enabled, create bool) {
	t.Helper()
	spec := &raftv1.MonitorSpec{Uuid: checkID, Kind: kind, Name: "site", Enabled: enabled, Schedule: "1m",
		Config: &raftv1.CheckConfig{Url: "https://example.com", Method: "GET", Timeout: 10, Domain: "example.com"}}
	op := &raftv1.PutMonitors{AccountId: "a"}
	if create {
		op.Creates = []*raftv1.MonitorSpec{spec}
	} else {
		op.Updates = []*raftv1.MonitorSpec{spec}
	}
	mustOK(t, s, cmd(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: op}}))
}

func execution(slot int64, status string) *raftv1.Execution {
	e := &raftv1.Execution{AccountId: "a", CheckUuid: checkID, Region: RegionControl, SlotUnixMs: slot, Status: status,
		Attempts: 1, StartedUnixMs: slot, FinishedUnixMs: slot + 100, DurationMs: 100}
	if status == ExecFailed {
		e.Error, e.ErrorKind = "unexpected status 500", "unexpected_status"
	}
	return e
}

func recordCmd(keep int64, execs ...*raftv1.Execution) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: execs, RetentionCount: keep}}})
}

func checkStatus(t *testing.T, s *Store) *statev1.CheckStatus {
	t.Helper()
	cs, err := s.CheckStatus(checkID)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func alertTypes(t *testing.T, s *Store) []string {
	t.Helper()
	pending, err := s.PendingAlerts(0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range pending {
		out = append(out, a.GetType())
	}
	return out
}

func TestExecutionStoredOncePerSlotAndVerdictFinal(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	putCheck(t, s, KindHTTPCheck, true, true)
	slot := t0 + 60_000
	running := execution(slot, ExecRunning)
	retrying := execution(slot, ExecRetrying)
	retrying.Attempts = 2
	mustOK(t, s, recordCmd(0, running), recordCmd(0, retrying), recordCmd(0, running))
	if e, err := s.Execution(checkID, RegionControl, slot); err != nil || e.GetStatus() != ExecRetrying {
		t.Fatalf("after running, retrying, running again: %v %v", e, err)
	}
	if cs := checkStatus(t, s); cs.GetLastStatus() != ExecRetrying || cs.GetVerdict() != "" || cs.GetExecutions() != 1 {
		t.Fatalf("status %v", cs)
	}
	ok := execution(slot, ExecSuccess)
	ok.Attempts = 3
	failed := execution(slot, ExecFailed) // a second runner's late verdict
	mustOK(t, s, recordCmd(0, ok), recordCmd(0, failed))
	execs, err := s.Executions("a", checkID, 0)
	if err != nil || len(execs) != 1 || execs[0].GetStatus() != ExecSuccess || execs[0].GetAttempts() != 3 {
		t.Fatalf("executions %v %v", execs, err)
	}
	cs := checkStatus(t, s)
	if cs.GetVerdict() != ExecSuccess || cs.GetLastExecutionUnixMs() != slot+100 || cs.GetExecutions() != 1 {
		t.Fatalf("status %v", cs)
	}
	if _, err := s.Executions("other", checkID, 0); err != ErrNotFound {
		t.Fatalf("another account's check: %v", err)
	}
}

func TestExecutionRetentionNewestFirst(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	putCheck(t, s, KindHTTPCheck, true, true)
	for i := range int64(5) {
		mustOK(t, s, recordCmd(3, execution(t0+i*60_000, ExecSuccess)))
	}
	execs, err := s.Executions("a", checkID, 0)
	if err != nil || len(execs) != 3 {
		t.Fatalf("executions %d %v", len(execs), err)
	}
	for i, e := range execs {
		if want := t0 + int64(4-i)*60_000; e.GetSlotUnixMs() != want {
			t.Errorf("execution %d: slot %d, want %d", i, e.GetSlotUnixMs(), want)
		}
	}
	if cs := checkStatus(t, s); cs.GetExecutions() != 3 {
		t.Fatalf("count %d", cs.GetExecutions())
	}
	if limited, _ := s.Executions("a", checkID, 2); len(limited) != 2 {
		t.Fatalf("limit 2: %d", len(limited))
	}
	// Deleting the check removes its executions and status.
	mustOK(t, s, cmd(&raftv1.Command{Op: &raftv1.Command_DeleteMonitor{DeleteMonitor: &raftv1.DeleteMonitor{AccountId: "a", MonitorUuid: checkID}}}))
	if keys := keysWithPrefix(t, s, prefixExecution); len(keys) != 0 {
		t.Fatalf("executions left: %d", len(keys))
	}
	if keys := keysWithPrefix(t, s, prefixCheckStatus); len(keys) != 0 {
		t.Fatalf("status left: %v", keys)
	}
}

func TestCheckAlertsOncePerOutage(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindHTTPCheck, true, true)
	slot := t0
	next := func(status string) {
		slot += 60_000
		mustOK(t, s, recordCmd(0, execution(slot, status)))
	}
	next(ExecSuccess)
	next(ExecFailed)
	next(ExecFailed)
	if got := alertTypes(t, s); strings.Join(got, ",") != AlertCheckFailed {
		t.Fatalf("after two failures: %v", got)
	}
	pending, _ := s.PendingAlerts(0)
	if e := pending[0].GetExecution(); e.GetStatus() != ExecFailed || e.GetError() == "" || len(pending[0].GetDeliveries()) != 1 {
		t.Fatalf("alert %v", pending[0])
	}
	next(ExecSuccess)
	next(ExecSuccess)
	if got := alertTypes(t, s); len(got) != 2 || !strings.Contains(strings.Join(got, ","), AlertCheckRecovered) {
		t.Fatalf("after recovery: %v", got)
	}
	// An older slot's verdict arriving late does not move the status.
	mustOK(t, s, recordCmd(0, execution(t0+30_000, ExecFailed)))
	if cs := checkStatus(t, s); cs.GetVerdict() != ExecSuccess || cs.GetAlert() != "" {
		t.Fatalf("status after a late old verdict %v", cs)
	}
	if got := alertTypes(t, s); len(got) != 2 {
		t.Fatalf("a late old verdict alerted: %v", got)
	}
}

func TestCheckAlertsDisabledAndSuspendedAreSilent(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindHTTPCheck, false, true)
	mustOK(t, s, recordCmd(0, execution(t0+60_000, ExecFailed)))
	if got := alertTypes(t, s); len(got) != 0 {
		t.Fatalf("a disabled check alerted: %v", got)
	}

	s = openStore(t)
	suspend(t, s)
	mustOK(t, s, createChannelCmd("acct", "c1", true))
	spec := &raftv1.MonitorSpec{Uuid: checkID, Kind: KindHTTPCheck, Name: "site", Enabled: true, Schedule: "1m", Config: &raftv1.CheckConfig{Url: "https://example.com"}}
	// The plan allows 2 monitors; "job" is one.
	mustOK(t, s, cmd(&raftv1.Command{TimeUnixMs: t0 + 30_000, Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "acct", Creates: []*raftv1.MonitorSpec{spec}}}}))
	e := execution(t0+60_000, ExecFailed)
	e.AccountId = "acct"
	c := recordCmd(0, e)
	c.TimeUnixMs = t0 + 60_000
	mustOK(t, s, c)
	if got := alertTypes(t, s); len(got) != 0 {
		t.Fatalf("a suspended account's check alerted: %v", got)
	}
	if cs, _ := s.CheckStatus(checkID); cs.GetVerdict() != ExecFailed || cs.GetAlert() != "" {
		t.Fatalf("status %v", cs)
	}
}

func TestSSLAlerts(t *testing.T) {
	ssl := func(status, level string, days int64) *raftv1.Execution {
		return &raftv1.Execution{Status: status, Ssl: &raftv1.ExecutionSSL{Level: level, DaysLeft: days}}
	}
	for _, tc := range []struct {
		name, standing string
		e              *raftv1.Execution
		raise          string
		next           string
	}{
		{"fine", "", ssl(ExecSuccess, "ok", 90), "", ""},
		{"warning once", "", ssl(ExecSuccess, "warning", 20), AlertSSLWarning, AlertSSLWarning},
		{"warning again", AlertSSLWarning, ssl(ExecSuccess, "warning", 19), "", AlertSSLWarning},
		{"alert after warning", AlertSSLWarning, ssl(ExecFailed, "alert", 5), AlertSSLAlert, AlertSSLAlert},
		{"alert once", AlertSSLAlert, ssl(ExecFailed, "alert", 4), "", AlertSSLAlert},
		{"renewed", AlertSSLAlert, ssl(ExecSuccess, "ok", 90), AlertCheckRecovered, ""},
		{"renewed into warning", AlertSSLAlert, ssl(ExecSuccess, "warning", 25), AlertCheckRecovered + "," + AlertSSLWarning, AlertSSLWarning},
		{"warning gone", AlertSSLWarning, ssl(ExecSuccess, "ok", 90), AlertCheckRecovered, ""},
		{"unreachable", "", &raftv1.Execution{Status: ExecFailed}, AlertCheckFailed, AlertCheckFailed},
	} {
		raise, next := checkAlerts(KindSSLCheck, tc.standing, tc.e)
		if strings.Join(raise, ",") != tc.raise || next != tc.next {
			t.Errorf("%s: raise %v next %q, want %q %q", tc.name, raise, next, tc.raise, tc.next)
		}
	}
}

func TestRecordExecutionsRefusesOversize(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	putCheck(t, s, KindSSLCheck, true, true)
	big := execution(t0, ExecFailed)
	big.Error = strings.Repeat("é", MaxExecutionError)
	if r := apply(t, s, recordCmd(0, big))[0]; r.GetStatus() != raftv1.Status_STATUS_INVALID {
		t.Fatalf("a 2 KiB error: %v", r)
	}
	BoundExecution(big)
	if len(big.Error) > MaxExecutionError || !strings.HasSuffix(big.Error, "é") {
		t.Fatalf("cut to %d bytes", len(big.Error))
	}
	big.Ssl = &raftv1.ExecutionSSL{DnsNames: make([]string, 100)}
	BoundExecution(big)
	mustOK(t, s, recordCmd(0, big))
	many := make([]*raftv1.Execution, MaxExecutionsPerCommand+1)
	for i := range many {
		many[i] = execution(t0+int64(i)*60_000, ExecSuccess)
	}
	if r := apply(t, s, recordCmd(0, many...))[0]; r.GetStatus() != raftv1.Status_STATUS_INVALID {
		t.Fatalf("%d executions: %v", len(many), r)
	}
	mustOK(t, s, recordCmd(0, many[:MaxExecutionsPerCommand]...))
}

func TestFeedReadsChangesBesideTheStoreWatch(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	f := s.NewFeed()
	f.Watch(true)
	s.Watch(true)
	putCheck(t, s, KindHTTPCheck, true, true)
	if ids, _, _ := s.TakeChanges(); len(ids) != 1 || ids[0] != checkID {
		t.Fatalf("store watch: %v", ids)
	}
	select {
	case <-f.Changed():
	default:
		t.Fatal("the feed was not signalled")
	}
	if ids, _, _ := f.TakeChanges(); len(ids) != 1 || ids[0] != checkID {
		t.Fatalf("feed: %v", ids)
	}
	s.Watch(false) // the store's reader stops; the feed still reads
	putCheck(t, s, KindHTTPCheck, false, false)
	if ids, _, _ := f.TakeChanges(); len(ids) != 1 {
		t.Fatalf("feed after the store stopped watching: %v", ids)
	}
}
