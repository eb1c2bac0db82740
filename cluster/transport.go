package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
)

// DialFunc opens a connection; tests pass one that injects faults.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// streamLayer is raft's TCP stream layer with a pluggable dialer, so tests
// can cut and heal links between nodes (the kernel here has no netem), and
// an advertised address that may differ from the bound one (a node bound
// to 0.0.0.0 tells its peers an address they can dial).
// With PeerTLS, the listener is wrapped in TLS requiring a client
// certificate, and dialled connections complete a TLS handshake
// presenting ours, within the dial timeout.
type streamLayer struct {
	net.Listener
	advertise net.Addr
	dial      DialFunc
	tls       *tls.Config // client side; nil: cleartext
}

func newStreamLayer(ln net.Listener, advertise net.Addr, dial DialFunc, server, client *tls.Config) *streamLayer {
	s := &streamLayer{Listener: ln, advertise: advertise, dial: dial}
	if server != nil {
		s.Listener = tls.NewListener(ln, server)
		s.tls = client
	}
	return s
}

var _ raft.StreamLayer = (*streamLayer)(nil)

// Addr is the address raft advertises to its peers.
func (s *streamLayer) Addr() net.Addr { return s.advertise }

// Dial opens a raft connection to address.
func (s *streamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := s.dial(ctx, "tcp", string(address))
	if err != nil || s.tls == nil {
		return conn, err
	}
	cfg := s.tls.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _ = splitHostMaybePort(string(address))
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("raft tls handshake with %s: %w", address, err)
	}
	return tc, nil
}

// tcpAddr is an advertised TCP address, which may name a host.
type tcpAddr string

func (a tcpAddr) Network() string { return "tcp" }
func (a tcpAddr) String() string  { return string(a) }

// advertiseAddr is the address to tell peers for a listener bound at
// bound: adv ("host", "host:port"; no port or port 0 is the bound port),
// or the bound address itself when adv is empty. An unspecified IP
// (0.0.0.0, ::) cannot be dialled by a peer and is refused.
func advertiseAddr(adv string, bound net.Addr) (net.Addr, error) {
	bhost, bport, err := net.SplitHostPort(bound.String())
	if err != nil {
		return nil, fmt.Errorf("bound address %q: %w", bound, err)
	}
	host, port := bhost, bport
	if adv != "" {
		host, port = splitHostMaybePort(adv)
		if port == "" || port == "0" {
			port = bport
		}
	}
	if host == "" {
		return nil, fmt.Errorf("%q has no host to advertise", net.JoinHostPort(host, port))
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return nil, fmt.Errorf("%s is not an address peers can reach: give an advertise address", net.JoinHostPort(host, port))
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return nil, fmt.Errorf("advertise address %q: bad port", adv)
	}
	return tcpAddr(net.JoinHostPort(host, port)), nil
}

// splitHostMaybePort splits "host:port", "[v6]:port", "host" or a bare
// IPv6 address into host and port ("" when absent).
func splitHostMaybePort(s string) (host, port string) {
	if h, p, err := net.SplitHostPort(s); err == nil {
		return h, p
	}
	if len(s) > 1 && s[0] == '[' && s[len(s)-1] == ']' {
		return s[1 : len(s)-1], ""
	}
	return s, ""
}
