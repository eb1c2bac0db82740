package buffer

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// eventIDs reads every event held, in order.
func eventIDs(t *testing.T, b *Buffer) []string {
	t.Helper()
	es, err := b.Events(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range es {
		ids = append(ids, e.Event.GetEventId())
	}
	return ids
}

// waitHealthy waits until the buffer stores items again.
func waitHealthy(t *testing.T, b *Buffer) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for b.Health() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not recovered: %v", b.Health())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRemovedDirRefusesThenRecovers: the buffer's directory removed under
// it, the next append is refused (ErrUnavailable, never a nil for an item
// written into files that have no name any more) and Health says why
// while the recovery waits; then the buffer recovers: what it held is in a
// new directory at its path, in order, appends work again, Recovered is
// called, and a reopen finds everything (the refused item is not there).
func TestRemovedDirRefusesThenRecovers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "buffer")
	var recovered atomic.Int32
	b, err := Open(Options{Dir: dir, Small: true, CheckInterval: time.Hour, Recovered: func() { recovered.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Close() }()
	hold := make(chan struct{})
	b.beforeRecover = func() { <-hold }
	var want []string
	for i := range 10 {
		id := fmt.Sprint("e", i)
		if err := b.AppendEvent(event(id, 2000)); err != nil { // values past Badger's 1 KiB threshold live in the value log
			t.Fatal(err)
		}
		want = append(want, id)
	}
	if err := b.AppendResult(result("r1", 1)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(dir)); err != nil { // the whole data dir
		t.Fatal(err)
	}
	err = b.AppendEvent(event("lost", 10))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("append into a removed directory: %v, want ErrUnavailable", err)
	}
	if h := b.Health(); !errors.Is(h, ErrUnavailable) || !strings.Contains(h.Error(), "removed") {
		t.Fatalf("Health = %v", h)
	}
	if err := b.AppendResult(result("r2", 2)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a result while recovering: %v", err)
	}
	close(hold)
	waitHealthy(t, b)
	// Recovered is called once the buffer is healthy again: a moment later.
	for deadline := time.Now().Add(10 * time.Second); recovered.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if recovered.Load() != 1 {
		t.Fatalf("Recovered called %d times", recovered.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, sentinelName)); err != nil {
		t.Fatalf("no new directory: %v", err)
	}
	if err := b.AppendEvent(event("after", 10)); err != nil {
		t.Fatalf("append after recovery: %v", err)
	}
	want = append(want, "after")
	if got := eventIDs(t, b); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if s := b.Stats(); s.Events != 11 || s.Results != 1 {
		t.Fatalf("stats %+v", s)
	}
	es, _ := b.Events(0, 0)
	lastSeq := es[len(es)-1].Seq
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = open(t, dir, 0)
	if got := eventIDs(t, b); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a reopen: events %v, want %v", got, want)
	}
	if err := b.AppendEvent(event("next", 10)); err != nil {
		t.Fatal(err)
	}
	es, _ = b.Events(0, 0)
	if es[len(es)-1].Seq <= lastSeq {
		t.Fatalf("sequence went back: %d after %d", es[len(es)-1].Seq, lastSeq)
	}
}

// TestRemovalNoticedWithoutAppends: with no append coming, the periodic
// check notices the removal and recovers.
func TestRemovalNoticedWithoutAppends(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "buffer")
	done := make(chan struct{})
	b, err := Open(Options{Dir: dir, Small: true, CheckInterval: 10 * time.Millisecond, Recovered: func() { close(done) }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 5 {
		if err := b.AppendEvent(event(fmt.Sprint("e", i), 10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("no recovery: %v", b.Health())
	}
	if got := eventIDs(t, b); len(got) != 5 {
		t.Fatalf("events %v", got)
	}
}

// TestInterruptedRecoveryFinishedAtOpen: a complete copy left beside the
// directory (a recovery stopped before the swap) replaces it at Open; an
// incomplete one is removed.
func TestInterruptedRecoveryFinishedAtOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "buffer")
	b := open(t, dir, 0)
	if err := b.AppendEvent(event("kept", 10)); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := os.Rename(dir, dir+recoverSuffix); err != nil { // the complete copy
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil { // what the old database closed into
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "junk"), []byte("x"), 0o600)
	b = open(t, dir, 0)
	if got := eventIDs(t, b); fmt.Sprint(got) != "[kept]" {
		t.Fatalf("events %v", got)
	}
	b.Close()
	if err := os.MkdirAll(dir+recoverSuffix, 0o700); err != nil { // a copy cut short: no sentinel
		t.Fatal(err)
	}
	b = open(t, dir, 0)
	defer b.Close()
	if got := eventIDs(t, b); fmt.Sprint(got) != "[kept]" {
		t.Fatalf("events %v", got)
	}
	if _, err := os.Stat(dir + recoverSuffix); !os.IsNotExist(err) {
		t.Fatalf("the incomplete copy is still there: %v", err)
	}
}

// TestFailedWriteFails: a write Badger refuses fails the buffer: the
// append is refused with ErrUnavailable, Failed is closed, Health says
// why, and later appends are refused too.
func TestFailedWriteFails(t *testing.T) {
	b := open(t, t.TempDir(), 0)
	b.commits.after = func(error) error { return b.checkWrite(errors.New("input/output error")) }
	err := b.AppendEvent(event("e1", 10))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("append: %v", err)
	}
	select {
	case <-b.Failed():
	default:
		t.Fatal("Failed not closed")
	}
	if h := b.Health(); h == nil || !strings.Contains(h.Error(), "input/output error") {
		t.Fatalf("Health = %v", h)
	}
	if err := b.AppendEvent(event("e2", 10)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a later append: %v", err)
	}
	if err := b.Close(); err == nil {
		t.Fatal("Close of a failed buffer says nothing")
	}
}

// TestDamagedTablesAreAClearError: random bytes in the buffer's table
// files make Open fail with an error naming the directory and what to do;
// Badger would panic in a goroutine of its own.
func TestDamagedTablesAreAClearError(t *testing.T) {
	dir := t.TempDir()
	b := open(t, dir, 0)
	for i := range 50 {
		if err := b.AppendEvent(event(fmt.Sprint("e", i), 100)); err != nil {
			t.Fatal(err)
		}
	}
	b.Close() // flushes the memtable into a table
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no table written")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	junk := make([]byte, 32<<10)
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	for _, f := range tables {
		if err := os.WriteFile(f, junk, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Open(Options{Dir: dir, Small: true})
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "move that directory aside") {
		t.Fatalf("Open = %v", err)
	}
}
