package cluster

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/proto"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func newTestFSM(t *testing.T) *fsm {
	t.Helper()
	s, err := state.Open(state.Options{Dir: t.TempDir(), Small: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &fsm{state: s}
}

func fsmAccount(id, email string) *raftv1.Command {
	key := func(kid string, typ raftv1.KeyType) *raftv1.Key {
		return &raftv1.Key{Id: kid, AccountId: id, Type: typ, Hash: []byte(id + "/" + kid)}
	}
	return &raftv1.Command{Version: 1, TimeUnixMs: 1_700_000_000_000, Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: id, Email: email, Plan: &raftv1.Plan{Name: "free"},
		IngestKey: key("ik", raftv1.KeyType_KEY_TYPE_INGEST), ManagementKey: key("mk", raftv1.KeyType_KEY_TYPE_MANAGEMENT),
	}}}
}

func commandLog(t *testing.T, index uint64, cmd *raftv1.Command) *raft.Log {
	t.Helper()
	data, err := proto.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: data}
}

func configurationLog(index uint64) *raft.Log {
	cfg := raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: "n1", Address: "127.0.0.1:1"}}}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(cfg)}
}

func stateDump(t *testing.T, s *state.Store) []byte {
	t.Helper()
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	var buf bytes.Buffer
	if _, err := snap.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFSMApplyBatch(t *testing.T) {
	f := newTestFSM(t)
	logs := []*raft.Log{
		configurationLog(1),
		commandLog(t, 2, fsmAccount("a", "a@example.com")),
		configurationLog(3),
		commandLog(t, 4, fsmAccount("b", "A@EXAMPLE.COM")), // e-mail taken
		commandLog(t, 5, fsmAccount("c", "c@example.com")),
		configurationLog(6),
	}
	want := []any{nil, raftv1.Status_STATUS_OK, nil, raftv1.Status_STATUS_CONFLICT, raftv1.Status_STATUS_OK, nil}
	out := f.ApplyBatch(logs)
	if len(out) != len(logs) {
		t.Fatalf("%d responses for %d logs", len(out), len(logs))
	}
	for i, w := range want {
		if w == nil {
			if out[i] != nil {
				t.Errorf("log %d (configuration): response %v, want nil", i, out[i])
			}
			continue
		}
		res, ok := out[i].(*raftv1.Result)
		if !ok || res.GetStatus() != w {
			t.Errorf("log %d: response %v, want result %v", i, out[i], w)
		}
	}
	if got := f.state.AppliedIndex(); got != 5 {
		t.Errorf("applied index %d, want 5 (the last command)", got)
	}

	// Only configuration entries: nothing reaches the state.
	before := stateDump(t, f.state.(*state.Store))
	if out := f.ApplyBatch([]*raft.Log{configurationLog(7)}); len(out) != 1 || out[0] != nil {
		t.Errorf("configuration only: %v", out)
	}
	if !bytes.Equal(stateDump(t, f.state.(*state.Store)), before) {
		t.Error("a configuration entry changed the state")
	}

	// Apply goes through ApplyBatch; a replayed entry gets a nil result.
	if res, ok := f.Apply(commandLog(t, 8, fsmAccount("d", "d@example.com"))).(*raftv1.Result); !ok || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Errorf("Apply: %v", res)
	}
	if res := f.Apply(commandLog(t, 8, fsmAccount("e", "e@example.com"))); res != (*raftv1.Result)(nil) {
		t.Errorf("Apply of a replayed entry: %v", res)
	}
}

func TestFSMApplyBatchPanicsOnBadEntries(t *testing.T) {
	v2 := fsmAccount("x", "x@example.com")
	v2.Version = 2
	for _, tc := range []struct {
		name string
		bad  func(t *testing.T) *raft.Log
	}{
		{"undecodable data", func(*testing.T) *raft.Log { return &raft.Log{Index: 3, Type: raft.LogCommand, Data: []byte{0xff}} }},
		{"unknown command version", func(t *testing.T) *raft.Log { return commandLog(t, 3, v2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestFSM(t)
			f.ApplyBatch([]*raft.Log{commandLog(t, 1, fsmAccount("a", "a@example.com"))})
			before := stateDump(t, f.state.(*state.Store))
			func() {
				defer func() {
					if recover() == nil {
						t.Error("did not panic")
					}
				}()
				f.ApplyBatch([]*raft.Log{commandLog(t, 2, fsmAccount("b", "b@example.com")), tc.bad(t)})
			}()
			if !bytes.Equal(stateDump(t, f.state.(*state.Store)), before) || f.state.AppliedIndex() != 1 {
				t.Error("a panicking batch changed the state")
			}
		})
	}
}

// bufferSink is a raft.SnapshotSink writing to memory.
type bufferSink struct {
	bytes.Buffer
	failWrites        bool
	closed, cancelled bool
}

func (s *bufferSink) Write(p []byte) (int, error) {
	if s.failWrites {
		return 0, errors.New("disk full")
	}
	return s.Buffer.Write(p)
}
func (s *bufferSink) ID() string    { return "test-snapshot" }
func (s *bufferSink) Close() error  { s.closed = true; return nil }
func (s *bufferSink) Cancel() error { s.cancelled = true; return nil }

type trackingReader struct {
	io.Reader
	closed bool
}

func (r *trackingReader) Close() error { r.closed = true; return nil }

func TestFSMSnapshotRestore(t *testing.T) {
	src := newTestFSM(t)
	src.ApplyBatch([]*raft.Log{
		commandLog(t, 1, fsmAccount("a", "a@example.com")),
		configurationLog(2),
		commandLog(t, 3, fsmAccount("b", "b@example.com")),
	})
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Writes after Snapshot are not in it.
	src.ApplyBatch([]*raft.Log{commandLog(t, 4, fsmAccount("late", "late@example.com"))})
	sink := &bufferSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatalf("persist: %v", err)
	}
	snap.Release()
	if !sink.closed || sink.cancelled {
		t.Errorf("sink closed %v, cancelled %v; want closed only", sink.closed, sink.cancelled)
	}

	dst := newTestFSM(t)
	dst.ApplyBatch([]*raft.Log{commandLog(t, 9, fsmAccount("other", "other@example.com"))})
	rc := &trackingReader{Reader: bytes.NewReader(sink.Bytes())}
	if err := dst.Restore(rc); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if !rc.closed {
		t.Error("Restore did not close the reader")
	}
	if dst.state.AppliedIndex() != 3 || !bytes.Equal(stateDump(t, dst.state.(*state.Store)), sink.Bytes()) {
		t.Errorf("restored state differs (applied %d, want 3)", dst.state.AppliedIndex())
	}
	for id, want := range map[string]bool{"a": true, "b": true, "late": false, "other": false} {
		if _, err := dst.state.(*state.Store).Account(id); (err == nil) != want {
			t.Errorf("account %s after restore: %v", id, err)
		}
	}

	// A failing sink is cancelled, not closed.
	snap, err = src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	bad := &bufferSink{failWrites: true}
	if err := snap.Persist(bad); err == nil || !bad.cancelled || bad.closed {
		t.Errorf("failing sink: err %v, cancelled %v, closed %v", err, bad.cancelled, bad.closed)
	}
}
