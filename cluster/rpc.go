package cluster

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/raft"

	clusterv1 "lookout/internal/gen/lookout/cluster/v1"
	"lookout/internal/gen/lookout/cluster/v1/clusterv1connect"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/httpserver"
)

// errForwardFailed: the leader could not be reached; retried like a
// missing leader, since a new one may be elected meanwhile.
var errForwardFailed = errors.New("forward to leader failed")

// errAbortedByRestore: the leader dropped the entry unapplied, for an
// operator restore; retried like a leader change.
var errAbortedByRestore = errors.New("aborted by a restore")

// rpcAttemptTimeout bounds one node-to-node call.
const rpcAttemptTimeout = 5 * time.Second

// noCompression takes gzip out of ClusterService, both ways. Its messages
// are small protobufs between nodes of one site: compressing every
// forwarded ingest batch's result cost the leader about 9% of its CPU under
// load (docs/performance.md) and saved nothing that matters.
var (
	noCompression       = connect.WithCompression("gzip", nil, nil)
	noAcceptCompression = connect.WithAcceptCompression("gzip", nil, nil)
)

// rpcServer serves ClusterService for one node.
type rpcServer struct{ n *Node }

func newRPCHandler(n *Node) (string, http.Handler) {
	path, h := clusterv1connect.NewClusterServiceHandler(&rpcServer{n: n}, noCompression)
	token := "Bearer " + n.rpcToken()
	mutual := n.opts.PeerTLS != nil
	return path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// With mutual TLS the listener verified any client certificate
		// against the CA; the RPC path requires one.
		if mutual && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) {
			http.Error(w, "client certificate required", http.StatusUnauthorized)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(token)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		httpserver.MarkRPC(r.Context()) // a peer's connection: outside the public connection cap
		h.ServeHTTP(w, r)
	})
}

// Apply proposes a forwarded command; only the leader does.
func (s *rpcServer) Apply(ctx context.Context, req *connect.Request[clusterv1.ApplyRequest]) (*connect.Response[clusterv1.ApplyResponse], error) {
	if s.n.raft.State() != raft.Leader {
		return nil, connect.NewError(connect.CodeFailedPrecondition, ErrNotLeader)
	}
	res, err := s.n.applyLocal(req.Msg.GetCommand())
	if err != nil {
		return nil, toConnect(err)
	}
	return connect.NewResponse(&clusterv1.ApplyResponse{Result: res}), nil
}

// ReadIndex answers the leader's applied index after confirming leadership.
func (s *rpcServer) ReadIndex(ctx context.Context, _ *connect.Request[clusterv1.ReadIndexRequest]) (*connect.Response[clusterv1.ReadIndexResponse], error) {
	if s.n.raft.State() != raft.Leader {
		return nil, connect.NewError(connect.CodeFailedPrecondition, ErrNotLeader)
	}
	index, err := s.n.readIndex()
	if err != nil {
		return nil, toConnect(err)
	}
	return connect.NewResponse(&clusterv1.ReadIndexResponse{Index: index}), nil
}

// Status reports this node's raft view.
func (s *rpcServer) Status(ctx context.Context, _ *connect.Request[clusterv1.StatusRequest]) (*connect.Response[clusterv1.StatusResponse], error) {
	return connect.NewResponse(s.n.localStatus()), nil
}

// localStatus is this node's own raft view.
func (n *Node) localStatus() *clusterv1.StatusResponse {
	st := n.raft.State()
	var contact int64
	if st != raft.Leader {
		contact = -1
		if lc := n.raft.LastContact(); !lc.IsZero() {
			contact = time.Since(lc).Milliseconds()
		}
	}
	return &clusterv1.StatusResponse{
		NodeId:        n.opts.NodeID,
		State:         strings.ToLower(st.String()),
		AppliedIndex:  n.state.AppliedIndex(),
		LastContactMs: contact,
		HasPeers:      n.hasPeers(),
		LeaderId:      n.Leader(),
	}
}

// toConnect turns our errors into Connect codes the caller maps back.
func toConnect(err error) error {
	switch {
	case errors.Is(err, ErrNotLeader):
		return connect.NewError(connect.CodeFailedPrecondition, err)
	case errors.Is(err, ErrNoLeader), errors.Is(err, ErrShutdown):
		return connect.NewError(connect.CodeUnavailable, err)
	case errors.Is(err, errAbortedByRestore):
		return connect.NewError(connect.CodeAborted, err)
	}
	return connect.NewError(connect.CodeInternal, err)
}

// fromConnect turns a Connect error from a peer back into ours. An error
// the client made up rather than received (IsWireError) means the call
// broke off: a leader killed mid-request resets the stream, which Connect
// reports as internal. That is a failed forward, retried like the others
// (the command's request id keeps a retry from applying twice), where an
// internal error the peer answered is final.
func fromConnect(err error) error {
	switch connect.CodeOf(err) {
	case connect.CodeFailedPrecondition:
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	case connect.CodeUnavailable, connect.CodeDeadlineExceeded, connect.CodeCanceled:
		return fmt.Errorf("%w: %w", errForwardFailed, err)
	case connect.CodeAborted:
		return fmt.Errorf("%w: %w", errAbortedByRestore, err)
	case connect.CodeInternal, connect.CodeUnknown:
		if !connect.IsWireError(err) {
			return fmt.Errorf("%w: %w", errForwardFailed, err)
		}
	}
	return err
}

// rpcClients holds one Connect client per peer HTTP address, over one
// HTTP/2 transport: cleartext, or TLS when a config is given.
type rpcClients struct {
	httpc  *http.Client
	tr     *http.Transport
	token  string
	scheme string

	mu      sync.Mutex
	clients map[string]clusterv1connect.ClusterServiceClient
}

func newRPCClients(dial DialFunc, token string, tlsConf *tls.Config) *rpcClients {
	tr := &http.Transport{DialContext: dial, Protocols: new(http.Protocols), IdleConnTimeout: 90 * time.Second}
	scheme := "http://"
	if tlsConf != nil {
		tr.TLSClientConfig = tlsConf.Clone()
		tr.Protocols.SetHTTP2(true)
		scheme = "https://"
	} else {
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	return &rpcClients{httpc: &http.Client{Transport: tr}, tr: tr, token: token, scheme: scheme, clients: map[string]clusterv1connect.ClusterServiceClient{}}
}

func (c *rpcClients) client(addr string) clusterv1connect.ClusterServiceClient {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.clients[addr]
	if !ok {
		cl = clusterv1connect.NewClusterServiceClient(c.httpc, c.scheme+addr, noAcceptCompression)
		c.clients[addr] = cl
	}
	return cl
}

func request[M any](c *rpcClients, msg *M) *connect.Request[M] {
	req := connect.NewRequest(msg)
	req.Header().Set("Authorization", "Bearer "+c.token)
	return req
}

func (c *rpcClients) apply(ctx context.Context, addr string, cmd *raftv1.Command) (*raftv1.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, applyTimeout+time.Second)
	defer cancel()
	resp, err := c.client(addr).Apply(ctx, request(c, &clusterv1.ApplyRequest{Command: cmd}))
	if err != nil {
		return nil, fromConnect(err)
	}
	return resp.Msg.GetResult(), nil
}

func (c *rpcClients) readIndex(ctx context.Context, addr string) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, rpcAttemptTimeout)
	defer cancel()
	resp, err := c.client(addr).ReadIndex(ctx, request(c, &clusterv1.ReadIndexRequest{}))
	if err != nil {
		return 0, fromConnect(err)
	}
	return resp.Msg.GetIndex(), nil
}

func (c *rpcClients) status(ctx context.Context, addr string) (*clusterv1.StatusResponse, error) {
	resp, err := c.client(addr).Status(ctx, request(c, &clusterv1.StatusRequest{}))
	if err != nil {
		return nil, fromConnect(err)
	}
	return resp.Msg, nil
}

func (c *rpcClients) close() {
	if c != nil {
		c.tr.CloseIdleConnections()
	}
}
