package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/raft"

	clusterv1 "lookout/internal/gen/lookout/cluster/v1"
)

// restoreEnqueueTimeout bounds the wait for raft's leader loop to take a
// restore; the copy and the state's restore that follow are not bounded.
const restoreEnqueueTimeout = 10 * time.Second

// restoreChunk is the size of the messages a follower streams a snapshot
// to the leader in.
const restoreChunk = 1 << 20

// errBadTransfer: the stream a follower sent is not the one it announced.
var errBadTransfer = errors.New("snapshot transfer damaged")

// Restore replaces the replicated state with the snapshot stream held in
// r (size bytes, in the state machine's format; the caller has checked it,
// since a stream the state machine cannot load would stop the leader).
// The leader hands it to raft's user restore: raft copies it into a new
// snapshot at an index past its log and past the stream's own applied
// index, loads it into the state, and leaves a hole in the log, so that
// every follower (and every later joiner) installs that snapshot. On a
// follower the stream goes to the leader over ClusterService.Restore.
// While there is no leader it waits like Apply.
func (n *Node) Restore(ctx context.Context, r io.ReaderAt, size int64) error {
	return n.withLeader(ctx, func(ctx context.Context) error {
		if n.raft.State() == raft.Leader {
			return n.restoreLocal(r, size)
		}
		leader, err := n.leaderHTTPAddr()
		if err != nil {
			return err
		}
		return n.rpc.restore(ctx, leader, r, size)
	})
}

// restoreLocal is the leader's half of Restore.
func (n *Node) restoreLocal(r io.ReaderAt, size int64) error {
	if !n.ready.Load() {
		return fmt.Errorf("%w: leader is not ready yet", ErrNoLeader)
	}
	applied, err := n.state.SnapshotAppliedIndex(io.NewSectionReader(r, 0, size))
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Index: applied, Size: size}
	if err := n.raft.Restore(meta, io.NewSectionReader(r, 0, size), restoreEnqueueTimeout); err != nil {
		return fmt.Errorf("restore: %w", raftError(err))
	}
	n.log.Warn("state replaced by a restored snapshot", "snapshot_applied_index", applied, "bytes", size)
	return nil
}

// Restore takes a snapshot stream a follower forwards; only the leader
// does. The stream is spooled to a file in the data directory and checked
// against the size and SHA-256 announced before raft reads it.
func (s *rpcServer) Restore(ctx context.Context, stream *connect.ClientStream[clusterv1.RestoreRequest]) (*connect.Response[clusterv1.RestoreResponse], error) {
	if s.n.raft.State() != raft.Leader {
		return nil, connect.NewError(connect.CodeFailedPrecondition, ErrNotLeader)
	}
	f, err := os.CreateTemp(s.n.opts.DataDir, "restore-*.tmp")
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("spool snapshot: %w", err))
	}
	defer os.Remove(f.Name())
	defer f.Close()
	h := sha256.New()
	w := io.MultiWriter(f, h)
	var size, got int64
	var sum []byte
	for first := true; stream.Receive(); first = false {
		m := stream.Msg()
		if first {
			size, sum = m.GetSize(), m.GetSha256()
		}
		if _, err := w.Write(m.GetData()); err != nil {
			return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("spool snapshot: %w", err))
		}
		got += int64(len(m.GetData()))
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	if got != size || !bytes.Equal(h.Sum(nil), sum) {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%w: got %d bytes of %d, or a checksum mismatch", errBadTransfer, got, size))
	}
	if err := s.n.restoreLocal(f, size); err != nil {
		return nil, toConnect(err)
	}
	return connect.NewResponse(&clusterv1.RestoreResponse{}), nil
}

// restore streams a snapshot to the leader at addr.
func (c *rpcClients) restore(ctx context.Context, addr string, r io.ReaderAt, size int64) error {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(r, 0, size)); err != nil {
		return fmt.Errorf("read snapshot: %w", err)
	}
	stream := c.client(addr).Restore(ctx)
	stream.RequestHeader().Set("Authorization", "Bearer "+c.token)
	msg := &clusterv1.RestoreRequest{Size: size, Sha256: h.Sum(nil)}
	buf := make([]byte, restoreChunk)
	sr := io.NewSectionReader(r, 0, size)
	for {
		k, err := io.ReadFull(sr, buf)
		if k > 0 || msg.Size > 0 {
			msg.Data = buf[:k]
			if serr := stream.Send(msg); serr != nil {
				break // the answer below says why
			}
			msg = &clusterv1.RestoreRequest{}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read snapshot: %w", err)
		}
	}
	if _, err := stream.CloseAndReceive(); err != nil {
		return fromConnect(err)
	}
	return nil
}
