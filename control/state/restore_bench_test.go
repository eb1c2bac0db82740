package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// BenchmarkRestore loads, on a store with the production Badger options,
// the snapshot of a state of 100,000 ping monitors in 100 accounts (each
// created by an apply, so with its audit entry): what a node installing a
// snapshot or an operator restore does. MB/s is of the snapshot stream;
// restore-s is the time of one Restore, the swap included.
func BenchmarkRestore(b *testing.B) {
	const (
		accounts = 100
		monitors = 100000
	)
	src, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	applyAll(b, src, pingMonitorsSetup(accounts, monitors, "job-%06d", 3600), 8)
	sn, err := src.Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	var snap bytes.Buffer
	if _, err := sn.(*Snapshot).WriteTo(&snap); err != nil {
		b.Fatal(err)
	}
	sn.Release()
	src.Close()

	b.SetBytes(int64(snap.Len()))
	b.ResetTimer()
	var took time.Duration
	for range b.N {
		b.StopTimer()
		s, err := Open(Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if err := s.Restore(bytes.NewReader(snap.Bytes())); err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		b.StopTimer()
		s.Close()
	}
	b.ReportMetric(took.Seconds()/float64(b.N), "restore-s")
}

// BenchmarkRestoreLarge restores a snapshot the size of make bench-scale's
// (1,000,000 ping monitors in 1,000 accounts: each monitor's record, its
// name's index key and an audit entry of its creation, about 600 MB) into
// an empty store with the production Badger options, and reports the
// process's peak RSS over the restore (peak-MiB, from /proc/self/status,
// sampled every 10 ms) beside the time, and before-MiB, its RSS before.
// The stream is made up, not applied (applying a million monitors would
// take minutes), and read from a file, as raft's snapshots are.
func BenchmarkRestoreLarge(b *testing.B) {
	path := bigSnapshot(b, 1000, 1000)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ResetTimer()
	var took time.Duration
	var peak, base int64
	for range b.N {
		b.StopTimer()
		s, err := Open(Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		debug.FreeOSMemory()
		base = max(base, rssBytes(b))
		stop := make(chan struct{})
		type sample struct {
			top int64
			err error
		}
		sampled := make(chan sample)
		go func() {
			var top int64
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				rss, err := readRSS()
				if err != nil {
					sampled <- sample{err: err}
					return
				}
				top = max(top, rss)
				select {
				case <-stop:
					sampled <- sample{top: top}
					return
				case <-t.C:
				}
			}
		}()
		b.StartTimer()
		start := time.Now()
		if err := s.Restore(f); err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		b.StopTimer()
		f.Close()
		close(stop)
		got := <-sampled
		if got.err != nil {
			b.Fatal(got.err)
		}
		peak = max(peak, got.top)
		s.Close()
	}
	b.ReportMetric(took.Seconds()/float64(b.N), "restore-s")
	b.ReportMetric(float64(base>>20), "before-MiB")
	b.ReportMetric(float64(peak>>20), "peak-MiB")
}

// bigSnapshot makes a snapshot stream of accounts accounts with perAccount
// ping monitors each, in key order: the accounts, an audit entry per
// monitor, meta:applied, the name index, the monitors; in a file of a
// temporary directory, whose path it returns.
func bigSnapshot(b *testing.B, accounts, perAccount int) string {
	path := filepath.Join(b.TempDir(), "snapshot")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := bufio.NewWriter(f)
	buf.Write(snapshotMagic)
	buf.Write(u64(1 << 20))
	rec := func(k, v []byte) {
		buf.Write(binary.AppendUvarint(nil, uint64(len(k))))
		buf.Write(k)
		buf.Write(binary.AppendUvarint(nil, uint64(len(v))))
		buf.Write(v)
	}
	acct := func(a int) string { return fmt.Sprintf("acct%04d", a) }
	uuid := func(a, i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", a, i) }
	name := func(i int) string { return fmt.Sprintf("nightly-backup-%07d", i) }
	for a := range accounts {
		v, _ := proto.Marshal(&statev1.Account{Id: acct(a), Email: acct(a) + "@example.com"})
		rec(k(prefixAccount, acct(a)), v)
	}
	for a := range accounts {
		for i := range perAccount {
			v := fmt.Appendf(nil, `{"op":"monitor.create","name":%q,"kind":"ping","fields":{"display_name":"Nightly backup %d of %s","schedule":"%d 3 * * *","timezone":"Europe/Berlin","timeout_seconds":3600,"grace_seconds":600,"tags":["backup","db"],"enabled":true},"by":"key-%s"}`,
				name(i), i, acct(a), i%60, acct(a))
			rec(fmt.Appendf(nil, "audit:%s:%016x", acct(a), a*perAccount+i), v)
		}
	}
	rec(keyApplied, u64(1<<20))
	for a := range accounts {
		for i := range perAccount {
			rec(fmt.Appendf(nil, "mon-name:%s:ping:%s", acct(a), name(i)), []byte(uuid(a, i)))
		}
	}
	for a := range accounts {
		for i := range perAccount {
			m := &statev1.Monitor{Uuid: uuid(a, i), AccountId: acct(a), Kind: KindPing, Name: name(i), Enabled: true,
				Tags: []string{"backup", "db"}, DisplayName: fmt.Sprintf("Nightly backup %d of %s", i, acct(a)),
				TimeoutSeconds: 3600, GraceSeconds: proto.Int64(600), CreatedUnixMs: t0 + int64(i), UpdatedUnixMs: t0 + int64(i),
				Schedule: fmt.Sprintf("%d 3 * * *", i%60), Timezone: "Europe/Berlin",
				Ping: &statev1.PingState{NextSeq: 1}}
			v, err := proto.Marshal(m)
			if err != nil {
				b.Fatal(err)
			}
			rec(k(prefixMonitor, uuid(a, i)), v)
		}
	}
	buf.WriteByte(0)
	if err := buf.Flush(); err != nil {
		b.Fatal(err)
	}
	return path
}

// rssBytes is the process's resident set size.
func rssBytes(b *testing.B) int64 {
	rss, err := readRSS()
	if err != nil {
		b.Fatal(err)
	}
	return rss
}

// readRSS reads the process's resident set size from /proc/self/status
// (internal/bench.ReadMemory does so too, but that package imports this
// one).
func readRSS() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/self/status")
}
