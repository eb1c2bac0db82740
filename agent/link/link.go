// Package link is the agent's connection to the control plane: a Connect
// client of AgentService over HTTP/2 (h2c for http:// URLs, TLS for
// https://), the agent token as a Bearer header on every call, and
// failover across the --control URLs: a call that fails on one URL is
// tried on the next, in turn, and the URL that last worked is tried first.
// Waiting between rounds is the caller's, with a Backoff.
//
// The link also tracks its state (connected, disconnected, unauthenticated)
// from the outcome of every call, for the logs and /metrics.
package link

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/go-hclog"

	agentv1 "lookout/internal/gen/lookout/agent/v1"
	"lookout/internal/gen/lookout/agent/v1/agentv1connect"
)

// DefaultCallTimeout bounds one unary call on one URL.
const DefaultCallTimeout = 30 * time.Second

// State is the link's state as the last call left it.
type State int32

// The states of the link.
const (
	// Disconnected: no call has worked yet, or the last failed on every URL.
	Disconnected State = iota
	// Connected: the last call was answered.
	Connected
	// Unauthenticated: a control node refused the token (revoked or
	// unknown). The agent keeps its buffer and its last assignments and
	// keeps trying, slowly, until the token works again.
	Unauthenticated
)

// String names the state.
func (s State) String() string {
	switch s {
	case Connected:
		return "connected"
	case Unauthenticated:
		return "unauthenticated"
	}
	return "disconnected"
}

// ErrUnauthenticated is wrapped by the error of a call the control plane
// refused for the token.
var ErrUnauthenticated = errors.New("the control plane refused the agent token (revoked or unknown)")

// ErrInvalid is wrapped by the error of a call the control plane refused
// as malformed (INVALID_ARGUMENT): a permanent answer, the same from every
// node, so the call is not tried on the next URL.
var ErrInvalid = errors.New("the control plane refused the request as malformed")

// Options configures the link.
type Options struct {
	// URLs are the control nodes' base URLs (http:// or https://), tried
	// in turn.
	URLs []string
	// Token is the agent token, sent as "Authorization: Bearer <Token>".
	Token string
	// TLS verifies https:// control nodes (RootCAs from --ca-file, nil for
	// the system roots) and may present a client certificate. Nil: the
	// system roots, no client certificate.
	TLS *tls.Config
	// Agent names the agent in every request.
	Agent *agentv1.AgentIdentity
	// CallTimeout bounds a unary call on one URL (default DefaultCallTimeout).
	CallTimeout time.Duration
	Logger      hclog.Logger
}

// Client is the agent's client of AgentService across several URLs.
type Client struct {
	o       Options
	httpc   *http.Client
	clients []agentv1connect.AgentServiceClient
	cur     atomic.Int32 // index of the URL tried first
	state   atomic.Int32

	mu       sync.Mutex
	lastLog  State
	onChange func(State)
}

// New checks the URLs and makes the client. It dials nothing yet.
func New(o Options) (*Client, error) {
	if len(o.URLs) == 0 {
		return nil, errors.New("no control URL given")
	}
	if o.Token == "" {
		return nil, errors.New("no agent token given")
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Agent == nil {
		o.Agent = &agentv1.AgentIdentity{}
	}
	tr := &http.Transport{Protocols: new(http.Protocols), IdleConnTimeout: 90 * time.Second, ForceAttemptHTTP2: true}
	tr.Protocols.SetHTTP2(true)            // https://: HTTP/2 negotiated by ALPN
	tr.Protocols.SetUnencryptedHTTP2(true) // http://: h2c with prior knowledge
	tr.HTTP2 = &http.HTTP2Config{SendPingTimeout: 15 * time.Second, PingTimeout: 10 * time.Second}
	if o.TLS != nil {
		tr.TLSClientConfig = o.TLS.Clone()
	} else {
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	c := &Client{o: o, httpc: &http.Client{Transport: bearer{token: o.Token, next: tr}}}
	for _, raw := range o.URLs {
		u, err := url.Parse(strings.TrimRight(raw, "/"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("control URL %q: want http://host:port or https://host:port", raw)
		}
		c.clients = append(c.clients, agentv1connect.NewAgentServiceClient(c.httpc, u.String()))
	}
	return c, nil
}

// Agent returns the identity the link sends.
func (c *Client) Agent() *agentv1.AgentIdentity { return c.o.Agent }

// State returns the link's state.
func (c *Client) State() State { return State(c.state.Load()) }

// URL returns the URL tried first now (the last that worked).
func (c *Client) URL() string { return c.o.URLs[c.cur.Load()] }

// OnStateChange calls fn (from the caller's goroutine) whenever the state
// changes. Set it before the first call.
func (c *Client) OnStateChange(fn func(State)) { c.onChange = fn }

// CloseIdle closes idle connections (tests, shutdown).
func (c *Client) CloseIdle() { c.httpc.CloseIdleConnections() }

// setState records the state after a call and logs a change once.
func (c *Client) setState(s State, url string, err error) {
	c.mu.Lock()
	c.state.Store(int32(s))
	changed := c.lastLog != s
	c.lastLog = s
	c.mu.Unlock()
	if !changed {
		return
	}
	switch s {
	case Connected:
		c.o.Logger.Info("connected to the control plane", "url", url)
	case Unauthenticated:
		c.o.Logger.Error("the control plane REFUSED the agent token (revoked or unknown): keeping the buffer and probing on the last assignments; retrying slowly until a valid token works", "url", url, "error", err)
	default:
		c.o.Logger.Warn("cannot reach the control plane: buffering and probing on the last assignments", "error", err)
	}
	if c.onChange != nil {
		c.onChange(s)
	}
}

// wrap makes the error of a round: ErrUnauthenticated when refused.
func wrap(err error) error {
	if connect.CodeOf(err) == connect.CodeUnauthenticated {
		return fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	return err
}

// IsUnauthenticated reports whether err is a refusal of the token (from
// a call, or the end of a stream).
func IsUnauthenticated(err error) bool {
	return errors.Is(err, ErrUnauthenticated) || connect.CodeOf(err) == connect.CodeUnauthenticated
}

// try calls fn with the client of each URL in turn, starting with the
// one that last worked, until one answers, the token is refused, or every
// URL failed; it returns the last error.
func (c *Client) try(ctx context.Context, fn func(ctx context.Context, cl agentv1connect.AgentServiceClient) error) error {
	start := int(c.cur.Load())
	var err error
	for i := range c.clients {
		idx := (start + i) % len(c.clients)
		err = fn(ctx, c.clients[idx])
		if err == nil {
			c.cur.Store(int32(idx))
			c.setState(Connected, c.o.URLs[idx], nil)
			return nil
		}
		if connect.CodeOf(err) == connect.CodeUnauthenticated {
			c.cur.Store(int32(idx))
			c.setState(Unauthenticated, c.o.URLs[idx], err)
			return wrap(err)
		}
		if connect.CodeOf(err) == connect.CodeInvalidArgument {
			c.cur.Store(int32(idx))
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.o.Logger.Debug("control node failed; trying the next", "url", c.o.URLs[idx], "error", err)
	}
	c.setState(Disconnected, "", err)
	return err
}

// unary runs one unary call through try, each attempt bounded by the
// call timeout.
func unary[Req, Res any](c *Client, ctx context.Context, msg *Req,
	call func(cl agentv1connect.AgentServiceClient) func(context.Context, *connect.Request[Req]) (*connect.Response[Res], error)) (*Res, error) {
	var out *Res
	err := c.try(ctx, func(ctx context.Context, cl agentv1connect.AgentServiceClient) error {
		actx, cancel := context.WithTimeout(ctx, c.o.CallTimeout)
		defer cancel()
		resp, err := call(cl)(actx, connect.NewRequest(msg))
		if err != nil {
			return err
		}
		out = resp.Msg
		return nil
	})
	return out, err
}

// ReportExecutions reports verdicts; see AgentService.ReportExecutions.
func (c *Client) ReportExecutions(ctx context.Context, execs *agentv1.ReportExecutionsRequest) (*agentv1.ReportExecutionsResponse, error) {
	execs.Agent = c.o.Agent
	return unary(c, ctx, execs, func(cl agentv1connect.AgentServiceClient) func(context.Context, *connect.Request[agentv1.ReportExecutionsRequest]) (*connect.Response[agentv1.ReportExecutionsResponse], error) {
		return cl.ReportExecutions
	})
}

// ForwardEvents forwards buffered events; see AgentService.ForwardEvents.
func (c *Client) ForwardEvents(ctx context.Context, req *agentv1.ForwardEventsRequest) (*agentv1.ForwardEventsResponse, error) {
	req.Agent = c.o.Agent
	return unary(c, ctx, req, func(cl agentv1connect.AgentServiceClient) func(context.Context, *connect.Request[agentv1.ForwardEventsRequest]) (*connect.Response[agentv1.ForwardEventsResponse], error) {
		return cl.ForwardEvents
	})
}

// Heartbeat reports the agent's state; see AgentService.Heartbeat.
func (c *Client) Heartbeat(ctx context.Context, req *agentv1.HeartbeatRequest) (*agentv1.HeartbeatResponse, error) {
	req.Agent = c.o.Agent
	return unary(c, ctx, req, func(cl agentv1connect.AgentServiceClient) func(context.Context, *connect.Request[agentv1.HeartbeatRequest]) (*connect.Response[agentv1.HeartbeatResponse], error) {
		return cl.Heartbeat
	})
}

// Stream is an open assignments stream; Close it.
type Stream struct {
	*connect.ServerStreamForClient[agentv1.AssignmentsResponse]
	cancel context.CancelFunc
}

// Close closes the stream.
func (s *Stream) Close() error {
	err := s.ServerStreamForClient.Close()
	s.cancel()
	return err
}

// Assignments opens the assignments stream on the first URL that answers
// with a first message within the call timeout, and returns the stream
// with that message as its Msg (until the next Receive). ctx bounds the
// whole stream; the caller closes it.
func (c *Client) Assignments(ctx context.Context, req *agentv1.AssignmentsRequest) (*Stream, error) {
	req.Agent = c.o.Agent
	var out *Stream
	err := c.try(ctx, func(ctx context.Context, cl agentv1connect.AgentServiceClient) error {
		sctx, cancel := context.WithCancel(ctx)
		// A node that takes the call but says nothing is given up on.
		first := time.AfterFunc(c.o.CallTimeout, cancel)
		st, err := cl.Assignments(sctx, connect.NewRequest(req))
		if err != nil {
			first.Stop()
			cancel()
			return err
		}
		// The call's headers (and any refusal) come with the first message.
		ok := st.Receive()
		timedOut := !first.Stop()
		if timedOut || !ok {
			err := st.Err()
			st.Close()
			cancel()
			if err == nil || timedOut && ctx.Err() == nil {
				err = connect.NewError(connect.CodeUnavailable, fmt.Errorf("the assignments stream sent no first message within %s", c.o.CallTimeout))
			}
			return err
		}
		out = &Stream{ServerStreamForClient: st, cancel: cancel}
		return nil
	})
	return out, err
}

// Lost notes that a call or stream that had worked failed with err: the
// state becomes Unauthenticated or Disconnected, and the next call starts
// with the next URL.
func (c *Client) Lost(err error) {
	if IsUnauthenticated(err) {
		c.setState(Unauthenticated, c.URL(), err)
		return
	}
	c.cur.Store(int32((int(c.cur.Load()) + 1) % len(c.clients)))
	c.setState(Disconnected, "", err)
}

// bearer sets the agent token on every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
