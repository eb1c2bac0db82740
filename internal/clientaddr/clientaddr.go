// Package clientaddr finds the address of the client behind a request,
// which every throttle and rate limit keys on. Without trusted proxies it
// is the TCP peer. Behind a load balancer or reverse proxy every client
// would then share the proxy's address (and its buckets), so the operator
// names the proxies (lookout control --trusted-proxies): from a trusted
// peer the client is the nearest untrusted hop of X-Forwarded-For, read
// from the right. Hops left of it were written by the client itself and
// are ignored, so a client cannot pick its own address by sending the
// header.
//
// Resolver.Wrap resolves the address once per request and keeps it in the
// request's context; Key and Addr read it there (and fall back to the TCP
// peer for a request that did not pass through Wrap).
package clientaddr

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Resolver finds client addresses with a list of trusted proxies.
type Resolver struct {
	trusted []netip.Prefix
}

// New returns a Resolver that trusts X-Forwarded-For from the peers in
// trusted (none: the TCP peer is always the client).
func New(trusted []netip.Prefix) *Resolver {
	return &Resolver{trusted: trusted}
}

// ParseTrusted parses "CIDR[,CIDR]" (a bare IP is one address). Empty is
// none.
func ParseTrusted(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR (10.0.0.0/8, fd00::/8) or an IP address", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

type ctxKey struct{}

// Wrap returns h with the client address of each request resolved and
// kept in its context.
func (res *Resolver) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := res.Resolve(r); a.IsValid() {
			r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, a))
		}
		h.ServeHTTP(w, r)
	})
}

// Resolve returns the client address of r: the TCP peer, or, when the
// peer is a trusted proxy, the nearest X-Forwarded-For hop that is not
// one. When every hop is trusted it is the leftmost; when a hop is not an
// address, the trusted hop that wrote it (it cannot be told apart from a
// spoofed one). The zero Addr when even the peer is not an IP address.
func (res *Resolver) Resolve(r *http.Request) netip.Addr {
	client := peer(r)
	if !client.IsValid() || !res.trusts(client) {
		return client
	}
	hops := forwardedFor(r)
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := parseHop(hops[i])
		if !ok {
			return client
		}
		client = hop
		if !res.trusts(hop) {
			return client
		}
	}
	return client
}

func (res *Resolver) trusts(a netip.Addr) bool {
	for _, p := range res.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Addr returns the client address Wrap resolved for r, or r's TCP peer.
func Addr(r *http.Request) netip.Addr {
	if a, ok := r.Context().Value(ctxKey{}).(netip.Addr); ok {
		return a
	}
	return peer(r)
}

// Key is what a request is limited or throttled by: its client address
// (Addr), and for IPv6 its /64 (one host usually has a whole /64, so
// counting its addresses one by one would count nothing).
func Key(r *http.Request) string {
	a := Addr(r)
	switch {
	case !a.IsValid():
		return r.RemoteAddr
	case a.Is4():
		return a.String()
	default:
		return netip.PrefixFrom(a, 64).Masked().String()
	}
}

// peer is the IP of the TCP peer, IPv4-mapped IPv6 unmapped.
func peer(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

// forwardedFor lists the X-Forwarded-For hops of every such header, in
// order (the header may be repeated; the hops then run on across them).
func forwardedFor(r *http.Request) []string {
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for _, h := range strings.Split(v, ",") {
			hops = append(hops, strings.TrimSpace(h))
		}
	}
	return hops
}

// parseHop reads one hop: an IP address, with a port or in brackets as
// some proxies write them.
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a.Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}
