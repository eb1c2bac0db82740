package raftbadger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftbench "github.com/hashicorp/raft/bench"
)

func openTest(t testing.TB, dir string, o Options) *Store {
	t.Helper()
	o.Dir, o.Small = dir, true
	s, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func testLog(idx uint64, data string) *raft.Log {
	return &raft.Log{Index: idx, Term: 1, Type: raft.LogCommand, Data: []byte(data)}
}

func checkBounds(t *testing.T, s raft.LogStore, first, last uint64) {
	t.Helper()
	f, err := s.FirstIndex()
	if err != nil || f != first {
		t.Fatalf("FirstIndex = %d, %v; want %d", f, err, first)
	}
	l, err := s.LastIndex()
	if err != nil || l != last {
		t.Fatalf("LastIndex = %d, %v; want %d", l, err, last)
	}
}

func TestEmptyIndexes(t *testing.T) {
	checkBounds(t, openTest(t, t.TempDir(), Options{}), 0, 0)
}

func TestStoreGetLogRoundTrip(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	logs := []*raft.Log{
		{Index: 1, Term: 3, Type: raft.LogConfiguration, Data: []byte("conf"),
			Extensions: []byte{0, 1, 2}, AppendedAt: time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 3600))},
		{Index: 2, Term: 3, Type: raft.LogCommand, Data: []byte{}, Extensions: nil, AppendedAt: time.Now()},
		{Index: 3, Term: 4, Type: raft.LogNoop}, // all zero/nil
	}
	for _, l := range logs {
		if err := s.StoreLog(l); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range logs {
		var got raft.Log
		if err := s.GetLog(want.Index, &got); err != nil {
			t.Fatal(err)
		}
		if !got.AppendedAt.Equal(want.AppendedAt) || got.AppendedAt.IsZero() != want.AppendedAt.IsZero() {
			t.Fatalf("AppendedAt = %v, want %v", got.AppendedAt, want.AppendedAt)
		}
		_, gotOff := got.AppendedAt.Zone()
		_, wantOff := want.AppendedAt.Zone()
		if gotOff != wantOff {
			t.Fatalf("zone offset = %d, want %d", gotOff, wantOff)
		}
		w := *want
		got.AppendedAt, w.AppendedAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("GetLog(%d) = %+v, want %+v", want.Index, got, w)
		}
	}
	checkBounds(t, s, 1, 3)
}

func TestCodecRejectsCorrupt(t *testing.T) {
	buf, err := encodeLog(nil, &raft.Log{Index: 9, Data: []byte("abc"), AppendedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	for n := 0; n < len(buf); n++ {
		if err := decodeLog(buf[:n], &l); err == nil {
			t.Fatalf("decode of %d/%d bytes succeeded", n, len(buf))
		}
	}
	if err := decodeLog(append(buf[:len(buf):len(buf)], 0), &l); err == nil {
		t.Fatal("trailing byte accepted")
	}
	bad := append([]byte{codecVersion + 1}, buf[1:]...)
	if err := decodeLog(bad, &l); err == nil {
		t.Fatal("unknown version accepted")
	}
}

func TestGetLogMissing(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	var l raft.Log
	if err := s.GetLog(1, &l); err != raft.ErrLogNotFound {
		t.Fatalf("GetLog on empty = %v, want raft.ErrLogNotFound", err)
	}
	if err := s.StoreLogs([]*raft.Log{testLog(1, "a"), testLog(3, "c")}); err != nil {
		t.Fatal(err)
	}
	if err := s.GetLog(2, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog(2) = %v, want raft.ErrLogNotFound", err)
	}
}

func TestGetLogAfterCloseIsNotNotFound(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	err := s.GetLog(1, &l)
	if err == nil || errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog after Close = %v, want a non-not-found error", err)
	}
}

func TestStoreLogsAndDeleteRange(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	var logs []*raft.Log
	for i := uint64(1); i <= 10; i++ {
		logs = append(logs, testLog(i, fmt.Sprint(i)))
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	checkBounds(t, s, 1, 10)

	steps := []struct{ min, max, first, last uint64 }{
		{5, 3, 1, 10},  // min > max: no-op
		{1, 3, 4, 10},  // prefix (compaction)
		{8, 10, 4, 7},  // suffix (conflict truncation)
		{5, 5, 4, 7},   // hole in the middle
		{50, 60, 4, 7}, // nothing there
		{0, 100, 0, 0}, // everything
	}
	for _, st := range steps {
		if err := s.DeleteRange(st.min, st.max); err != nil {
			t.Fatalf("DeleteRange(%d, %d): %v", st.min, st.max, err)
		}
		checkBounds(t, s, st.first, st.last)
	}
	var l raft.Log
	if err := s.GetLog(4, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog(4) after delete-all = %v", err)
	}
}

func TestDeleteRangeExact(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{DeleteBatch: 7})
	var logs []*raft.Log
	for i := uint64(1); i <= 120; i++ {
		logs = append(logs, testLog(i, "x"))
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(11, 110); err != nil { // 100 entries, 15 batches
		t.Fatal(err)
	}
	checkBounds(t, s, 1, 120)
	for i := uint64(1); i <= 120; i++ {
		var l raft.Log
		err := s.GetLog(i, &l)
		if deleted := i >= 11 && i <= 110; deleted != errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("GetLog(%d) = %v (deleted=%v)", i, err, deleted)
		}
	}
	if err := s.DeleteRange(1, 14); err != nil { // exactly two batches
		t.Fatal(err)
	}
	checkBounds(t, s, 111, 120)
}

func TestStable(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	v, err := s.Get([]byte("missing"))
	if err == nil || err.Error() != "not found" || v != nil {
		t.Fatalf("Get(missing) = %q, %v; want nil, \"not found\"", v, err)
	}
	n, err := s.GetUint64([]byte("missing"))
	if err != nil || n != 0 {
		t.Fatalf("GetUint64(missing) = %d, %v; want 0, nil", n, err)
	}
	if err := s.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("Get(k) = %q, %v", v, err)
	}
	if err := s.Set([]byte("empty"), []byte{}); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get([]byte("empty")); err != nil || v == nil || len(v) != 0 {
		t.Fatalf("Get(empty) = %#v, %v; want []byte{}, nil", v, err)
	}
	if err := s.Set([]byte("k"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get([]byte("k")); err == nil || err.Error() != "not found" {
		t.Fatalf("Get after Set(nil) = %v, want not found", err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 42); err != nil {
		t.Fatal(err)
	}
	if n, err := s.GetUint64([]byte("CurrentTerm")); err != nil || n != 42 {
		t.Fatalf("GetUint64 = %d, %v", n, err)
	}
	if _, err := s.GetUint64([]byte("empty")); err == nil {
		t.Fatal("GetUint64 of a 0-byte value succeeded")
	}
	// Log and stable key spaces are separate.
	if err := s.Set(logKey(1)[1:], []byte("x")); err != nil {
		t.Fatal(err)
	}
	checkBounds(t, s, 0, 0)
}

func TestReopenAndDoubleClose(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{})
	if err := s.StoreLogs([]*raft.Log{testLog(5, "five"), testLog(6, "six")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("node-1")); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	s = openTest(t, dir, Options{})
	checkBounds(t, s, 5, 6)
	var l raft.Log
	if err := s.GetLog(6, &l); err != nil || string(l.Data) != "six" {
		t.Fatalf("GetLog(6) = %+v, %v", l, err)
	}
	if v, err := s.Get([]byte("LastVoteCand")); err != nil || string(v) != "node-1" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if n, err := s.GetUint64([]byte("CurrentTerm")); err != nil || n != 7 {
		t.Fatalf("GetUint64 = %d, %v", n, err)
	}
}

func TestGCLoopRunsAndStops(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{GCInterval: time.Millisecond})
	big := bytes.Repeat([]byte("v"), 4<<10) // above ValueThreshold: goes to the value log
	for i := uint64(1); i <= 200; i++ {
		if err := s.StoreLog(&raft.Log{Index: i, Data: big}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteRange(1, 150); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRejectsBadRatio(t *testing.T) {
	if _, err := Open(Options{Dir: t.TempDir(), Small: true, GCDiscardRatio: 1.5}); err == nil {
		t.Fatal("Open accepted GCDiscardRatio 1.5")
	}
}

func TestThroughLogCache(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	c, err := raft.NewLogCache(512, s)
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 1000; i++ {
		logs = append(logs, testLog(i, fmt.Sprint(i)))
	}
	if err := c.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	checkBounds(t, c, 1, 1000)
	for _, i := range []uint64{1, 300, 700, 1000} { // 1 and 300 miss the cache
		var l raft.Log
		if err := c.GetLog(i, &l); err != nil || string(l.Data) != fmt.Sprint(i) {
			t.Fatalf("GetLog(%d) = %+v, %v", i, l, err)
		}
	}
	if err := c.DeleteRange(1, 500); err != nil {
		t.Fatal(err)
	}
	checkBounds(t, c, 501, 1000)
	var l raft.Log
	if err := c.GetLog(2000, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog(2000) = %v", err)
	}
}

// countFSM counts applied commands.
type countFSM struct{ n atomic.Int64 }

func (f *countFSM) Apply(*raft.Log) any                 { return f.n.Add(1) }
func (f *countFSM) Snapshot() (raft.FSMSnapshot, error) { return nopSnap{}, nil }
func (f *countFSM) Restore(r io.ReadCloser) error       { return r.Close() }

type nopSnap struct{}

func (nopSnap) Persist(sink raft.SnapshotSink) error { return sink.Close() }
func (nopSnap) Release()                             {}

// TestRaftSingleNode runs a real raft node on the store, restarts it on the
// same directory and checks that raft sees its existing state.
func TestRaftSingleNode(t *testing.T) {
	dir := t.TempDir()
	snaps := raft.NewInmemSnapshotStore()
	conf := raft.DefaultConfig()
	conf.LocalID = "n1"
	conf.HeartbeatTimeout = 50 * time.Millisecond
	conf.ElectionTimeout = 50 * time.Millisecond
	conf.LeaderLeaseTimeout = 50 * time.Millisecond
	conf.CommitTimeout = 5 * time.Millisecond
	conf.Logger = hclog.NewNullLogger()

	start := func(s *Store) (*raft.Raft, *countFSM) {
		_, trans := raft.NewInmemTransport("n1")
		fsm := &countFSM{}
		r, err := raft.NewRaft(conf, fsm, s, s, snaps, trans)
		if err != nil {
			t.Fatalf("NewRaft: %v", err)
		}
		return r, fsm
	}
	waitLeader := func(r *raft.Raft) {
		deadline := time.Now().Add(10 * time.Second)
		for r.State() != raft.Leader {
			if time.Now().After(deadline) {
				t.Fatal("no leader after 10s")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	s := openTest(t, dir, Options{})
	if ok, err := raft.HasExistingState(s, s, snaps); err != nil || ok {
		t.Fatalf("HasExistingState on empty = %v, %v", ok, err)
	}
	r, _ := start(s)
	boot := raft.Configuration{Servers: []raft.Server{{ID: "n1", Address: "n1"}}}
	if err := r.BootstrapCluster(boot).Error(); err != nil {
		t.Fatal(err)
	}
	waitLeader(r)
	for i := 0; i < 20; i++ {
		if err := r.Apply([]byte("cmd"), 5*time.Second).Error(); err != nil {
			t.Fatalf("Apply %d: %v", i, err)
		}
	}
	if err := r.Shutdown().Error(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openTest(t, dir, Options{})
	if ok, err := raft.HasExistingState(s, s, snaps); err != nil || !ok {
		t.Fatalf("HasExistingState after restart = %v, %v", ok, err)
	}
	r, fsm := start(s)
	defer func() { _ = r.Shutdown().Error() }()
	waitLeader(r)
	if err := r.Apply([]byte("cmd"), 5*time.Second).Error(); err != nil {
		t.Fatalf("Apply after restart: %v", err)
	}
	if err := r.Barrier(5 * time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	if got := fsm.n.Load(); got != 21 {
		t.Fatalf("FSM applied %d commands after restart, want 21", got)
	}
}

// BenchmarkStoreLogs stores batches of 64 logs of 256 bytes.
func BenchmarkStoreLogs(b *testing.B) {
	s := openTest(b, b.TempDir(), Options{})
	data := bytes.Repeat([]byte("d"), 256)
	batch := make([]*raft.Log, 64)
	var idx uint64
	b.SetBytes(int64(len(batch) * len(data)))
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i := range batch {
			idx++
			batch[i] = &raft.Log{Index: idx, Term: 1, Data: data, AppendedAt: time.Now()}
		}
		if err := s.StoreLogs(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// The raftbench suite from hashicorp/raft/bench, as raft-boltdb runs it.
func benchStore(b *testing.B) *Store { return openTest(b, b.TempDir(), Options{}) }

func BenchmarkRaftFirstIndex(b *testing.B)  { raftbench.FirstIndex(b, benchStore(b)) }
func BenchmarkRaftLastIndex(b *testing.B)   { raftbench.LastIndex(b, benchStore(b)) }
func BenchmarkRaftGetLog(b *testing.B)      { raftbench.GetLog(b, benchStore(b)) }
func BenchmarkRaftStoreLog(b *testing.B)    { raftbench.StoreLog(b, benchStore(b)) }
func BenchmarkRaftStoreLogs(b *testing.B)   { raftbench.StoreLogs(b, benchStore(b)) }
func BenchmarkRaftDeleteRange(b *testing.B) { raftbench.DeleteRange(b, benchStore(b)) }
func BenchmarkRaftSet(b *testing.B)         { raftbench.Set(b, benchStore(b)) }
func BenchmarkRaftGet(b *testing.B)         { raftbench.Get(b, benchStore(b)) }
func BenchmarkRaftSetUint64(b *testing.B)   { raftbench.SetUint64(b, benchStore(b)) }
func BenchmarkRaftGetUint64(b *testing.B)   { raftbench.GetUint64(b, benchStore(b)) }

// TestStoreLogsTooBigForOneTransaction stores a batch Badger cannot hold in
// one transaction (a Small store takes about 600 KiB per transaction): it
// is written in consecutive transactions and every entry is there.
func TestStoreLogsTooBigForOneTransaction(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{Small: true})
	var logs []*raft.Log
	for i := uint64(1); i <= 30000; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte("data")})
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	if first != 1 || last != 30000 {
		t.Fatalf("first %d last %d, want 1 and 30000", first, last)
	}
	for _, i := range []uint64{1, 12345, 21832, 30000} {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil || l.Index != i {
			t.Fatalf("log %d: %v %+v", i, err, l)
		}
	}
}
