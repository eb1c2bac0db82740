package netguard

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"syscall"
	"time"
)

// Options configures a Guard. The zero value applies the rule.
type Options struct {
	// AllowPrivate turns the rule off: every address may be dialled
	// (lookout control --allow-private-targets, and --dev).
	AllowPrivate bool
	// Allow are addresses (ip:port, compared exactly) dialled despite
	// the rule. Only tests use it, to reach one receiver on loopback while
	// the rule holds for every other address and port.
	Allow []netip.AddrPort
}

// Guard dials with the rule applied to the address of every connection
// it opens. It is safe for concurrent use.
type Guard struct {
	o Options
}

// New returns a Guard with the given options.
func New(o Options) *Guard {
	return &Guard{o: o}
}

// Dialer returns a net.Dialer whose ControlContext refuses a connection
// to an address the rule refuses, after DNS and before connect(2): each
// address of a name is judged as it is tried. A refused dial fails at
// once with a *net.OpError wrapping an *Error. With AllowPrivate the
// dialer is a plain one.
func (g *Guard) Dialer() *net.Dialer {
	if g.o.AllowPrivate {
		return &net.Dialer{}
	}
	return &net.Dialer{ControlContext: g.control}
}

// DialContext dials through Dialer; it fits probe.Options.DialContext and
// http.Transport.DialContext.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return g.Dialer().DialContext(ctx, network, address)
}

// Transport returns an HTTP transport that dials through the Guard, with
// the timeouts of http.DefaultTransport. While the rule holds it uses no
// proxy (HTTP_PROXY and HTTPS_PROXY are ignored): a proxy would connect
// to the target itself, where the rule cannot see the address.
func (g *Guard) Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	d := g.Dialer()
	d.Timeout, d.KeepAlive = 30*time.Second, 30*time.Second
	t.DialContext = d.DialContext
	if !g.o.AllowPrivate {
		t.Proxy = nil
	}
	return t
}

// control is the dialer's ControlContext: address is the ip:port about to
// be connected to.
func (g *Guard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &Error{Reason: reasonNotIP + ": " + address}
	}
	if slices.Contains(g.o.Allow, ap) {
		return nil
	}
	return Check(ap.Addr())
}
