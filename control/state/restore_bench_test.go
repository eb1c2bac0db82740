package state

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
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
	var setup []*raftv1.Command
	for a := range accounts {
		id := fmt.Sprint("acct", a)
		setup = append(setup, newAccount(id), uncapped(id), createChannelCmd(id, "hook", true))
	}
	for a := range accounts {
		var specs []*raftv1.MonitorSpec
		for i := a; i < monitors; i += accounts {
			specs = append(specs, &raftv1.MonitorSpec{Uuid: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Kind: KindPing,
				Name: fmt.Sprintf("job-%06d", i), Enabled: true, TimeoutSeconds: 3600, ExpectedIntervalSeconds: proto.Int64(3600)})
		}
		setup = append(setup, putMonitorsCmd(fmt.Sprint("acct", a), specs, nil))
	}
	applyAll(b, src, setup, 8)
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
