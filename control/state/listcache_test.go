package state

import (
	"bytes"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// listAccount makes account a with n ping monitors (job-N) and 20
// http_checks (site-N), enough for the list cache to keep it.
func listAccount(t *testing.T, s *Store, n int) {
	t.Helper()
	mustOK(t, s, newAccount("a"), setPlan("a", &raftv1.Plan{Name: "big", MonitorLimit: proto.Int64(10_000), MonitorsCreatedPerMinute: proto.Int64(10_000)}))
	var specs []*raftv1.MonitorSpec
	for i := range n {
		specs = append(specs, &raftv1.MonitorSpec{Uuid: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Kind: KindPing,
			Name: fmt.Sprintf("job-%04d", i), Enabled: true, TimeoutSeconds: 60})
	}
	for i := range 20 {
		specs = append(specs, checkSpec(i))
	}
	for len(specs) > 0 {
		chunk := specs[:min(200, len(specs))]
		specs = specs[len(chunk):]
		mustOK(t, s, putMonitorsCmd("a", chunk, nil))
	}
}

func checkSpec(i int) *raftv1.MonitorSpec {
	return &raftv1.MonitorSpec{Uuid: fmt.Sprintf("00000000-0000-4000-9000-%012d", i), Kind: KindHTTPCheck, Name: fmt.Sprintf("site-%02d", i),
		Enabled: true, Schedule: "1m", Config: &raftv1.CheckConfig{Url: "https://example.com", Method: "GET", Timeout: 10}}
}

// listChanges is a mix of every change a list shows: pings (state),
// executions (check statuses), a monitor created, one updated, a check
// renamed (its place in the order moves), one deleted, a check deleted, a
// new check with an execution.
func listChanges(t *testing.T, s *Store) []*raftv1.Command {
	t.Helper()
	exec := func(i int, status string) *raftv1.Execution {
		e := execution(t0, status)
		e.CheckUuid = checkSpec(i).Uuid
		return e
	}
	movedCheck := checkSpec(3)
	movedCheck.Name = "aa-renamed" // first of its kind now
	renamed := &raftv1.MonitorSpec{Uuid: "00000000-0000-4000-8000-000000000003", Kind: KindPing, Name: "job-0003", DisplayName: "Renamed", Enabled: false, TimeoutSeconds: 60}
	return []*raftv1.Command{
		ingestNow(ping("a", "job-0001", "run", t0), ping("a", "job-0002", "fail", t0), ping("a", "fresh", "complete", t0)),
		recordCmd(100, exec(0, ExecFailed), exec(1, ExecSuccess)),
		putMonitorsCmd("a", []*raftv1.MonitorSpec{checkSpec(20)}, []*raftv1.MonitorSpec{renamed, movedCheck}),
		recordCmd(100, exec(20, ExecFailed)),
		deleteMonitor("a", "00000000-0000-4000-8000-000000000004"),
		deleteMonitor("a", checkSpec(5).Uuid),
	}
}

// requireListFresh checks that the list the cache gives is the list read
// from the database.
func requireListFresh(t *testing.T, s *Store) {
	t.Helper()
	if s.lists.accts["a"] == nil {
		t.Fatal("the account is not cached: the test checks nothing")
	}
	got, err := s.MonitorList("a")
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.readMonitorList("a")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("the cached list has %d monitors, the database %d", len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(got[i].Monitor, want[i].Monitor) {
			t.Fatalf("row %d: cached %v\ndatabase %v", i, got[i].Monitor, want[i].Monitor)
		}
		if !proto.Equal(got[i].Check, want[i].Check) {
			t.Fatalf("row %d (%s): cached status %v, database %v", i, want[i].Monitor.GetName(), got[i].Check, want[i].Check)
		}
	}
}

func TestListCacheFollowsCommits(t *testing.T) {
	s := openStore(t)
	listAccount(t, s, minListedRows)
	if _, err := s.MonitorList("a"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, s, listChanges(t, s)...)
	requireListFresh(t, s)
	list, _ := s.MonitorList("a")
	if len(list) != minListedRows+20 { // + fresh + site-20 - job-0004 - site-05
		t.Fatalf("%d monitors listed", len(list))
	}
	// A rename alone moves a monitor in the order.
	moved := checkSpec(7)
	moved.Name = "zz-last"
	mustOK(t, s, putMonitorsCmd("a", nil, []*raftv1.MonitorSpec{moved}))
	requireListFresh(t, s)
}

// TestListCacheBuildReplaysTheJournal commits changes between the read of
// a build and its install, as a commit racing a panel view does: the
// build installs what it read with the journal replayed over it.
func TestListCacheBuildReplaysTheJournal(t *testing.T) {
	s := openStore(t)
	listAccount(t, s, minListedRows)
	epoch := s.lists.buildStart()
	read, err := s.readMonitorList("a")
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, s, listChanges(t, s)...)
	s.lists.buildEnd(epoch, "a", read)
	if len(s.lists.journal) != 0 {
		t.Fatal("the journal outlived the last build")
	}
	requireListFresh(t, s)
}

// TestListCacheRestoreDropsEverything: a restore replaces the database,
// so a build begun before it installs nothing and the cache starts over.
func TestListCacheRestoreDropsEverything(t *testing.T) {
	s := openStore(t)
	listAccount(t, s, minListedRows)
	snap := dump(t, s)
	if _, err := s.MonitorList("a"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, s, listChanges(t, s)...)
	epoch := s.lists.buildStart()
	read, err := s.readMonitorList("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if s.lists.accts["a"] != nil {
		t.Fatal("the restore left the account cached")
	}
	s.lists.buildEnd(epoch, "a", read)
	if s.lists.accts["a"] != nil {
		t.Fatal("a build begun before the restore installed its read")
	}
	if _, err := s.MonitorList("a"); err != nil {
		t.Fatal(err)
	}
	requireListFresh(t, s)
}

func TestListCacheKeepsLargeAccountsOnly(t *testing.T) {
	s := openStore(t)
	listAccount(t, s, minListedRows-21)
	if _, err := s.MonitorList("a"); err != nil {
		t.Fatal(err)
	}
	if s.lists.accts["a"] != nil || s.lists.rows != 0 {
		t.Fatal("an account under minListedRows was cached")
	}
}

// TestListCacheEvictsTheLeastRecentlyListed fills the cache past its
// bound with accounts made up in memory.
func TestListCacheEvictsTheLeastRecentlyListed(t *testing.T) {
	c := newListCache()
	per := maxListedRows / 3
	for a := range 4 {
		acct := fmt.Sprint("acct-", a)
		read := make([]ListedMonitor, per)
		for i := range read {
			read[i] = ListedMonitor{Monitor: testMonitor(fmt.Sprintf("%d-%d", a, i), acct)}
		}
		if a == 3 {
			c.list("acct-0") // acct-0 listed again: acct-1 is now the oldest
		}
		c.buildEnd(c.buildStart(), acct, read)
	}
	if c.rows > maxListedRows {
		t.Fatalf("%d rows cached, bound %d", c.rows, maxListedRows)
	}
	for acct, want := range map[string]bool{"acct-0": true, "acct-1": false, "acct-2": true, "acct-3": true} {
		if got := c.accts[acct] != nil; got != want {
			t.Errorf("%s cached %v, want %v", acct, got, want)
		}
	}
	if len(c.owner) != c.rows {
		t.Fatalf("%d owners for %d rows", len(c.owner), c.rows)
	}
}

func testMonitor(id, acct string) *statev1.Monitor {
	return &statev1.Monitor{Uuid: id, AccountId: acct, Kind: KindPing, Name: id}
}

// TestListCacheUnderConcurrentLists lists while commits change the
// account (go test -race): every list ends fresh, whichever order the
// builds, the lists and the commits came in.
func TestListCacheUnderConcurrentLists(t *testing.T) {
	s := openStore(t)
	listAccount(t, s, minListedRows)
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			default:
			}
			if _, err := s.MonitorList("a"); err != nil {
				errs <- err
				return
			}
			if n%4 == 3 { // now and then, a build again
				s.lists.reset()
			}
		}
	}()
	for i := range 200 {
		mustOK(t, s, ingestAt(t0+int64(i)*1000, 0, ping("a", fmt.Sprintf("job-%04d", i), "complete", t0+int64(i)*1000)))
	}
	mustOK(t, s, listChanges(t, s)...)
	close(done)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if _, err := s.MonitorList("a"); err != nil {
		t.Fatal(err)
	}
	requireListFresh(t, s)
}
