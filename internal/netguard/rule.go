// Package netguard is the address rule for every dial the control plane
// makes on a tenant's behalf (checks without regions, alert channels): it
// refuses loopback, unspecified, link-local (cloud metadata), private,
// shared, multicast and reserved addresses unless the operator allows
// them.
//
// The rule is applied in the dialer, to the address actually connected to
// (each DNS answer, each redirect's new connection), not to a URL's text:
// a name that resolves to 127.0.0.1, a redirect to 169.254.169.254 or a
// DNS answer that changes between a check and the dial are all caught at
// the one place every connection passes. Check is the rule as a pure
// function; Guard puts it in a net.Dialer's ControlContext.
package netguard

import (
	"errors"
	"net/netip"
)

// ErrNotAllowed is what every refusal wraps: errors.Is(err, ErrNotAllowed)
// tells a refused dial from a failed one.
var ErrNotAllowed = errors.New("target not allowed")

// Error is a dial the rule refused. Its text begins "target not allowed:",
// names the address and says what kind of address it is.
type Error struct {
	// Addr is the address that was to be dialled, as given (an IPv4-mapped
	// IPv6 address stays mapped).
	Addr netip.Addr
	// Reason is what kind of address it is: "a loopback address", ...
	Reason string
}

func (e *Error) Error() string {
	if !e.Addr.IsValid() {
		return ErrNotAllowed.Error() + ": " + e.Reason
	}
	return ErrNotAllowed.Error() + ": " + e.Addr.String() + " is " + e.Reason
}

// Is makes errors.Is(err, ErrNotAllowed) hold.
func (e *Error) Is(target error) bool { return target == ErrNotAllowed }

// The kinds of refused address.
const (
	reasonUnspecified = "an unspecified address"
	reasonThisNetwork = "a \"this network\" address"
	reasonLoopback    = "a loopback address"
	reasonLinkLocal   = "a link-local address"
	reasonMetadata    = "a link-local address (cloud metadata)"
	reasonPrivate     = "a private address"
	reasonShared      = "a shared (carrier-grade NAT) address"
	reasonMulticast   = "a multicast address"
	reasonReserved    = "a reserved address"
	reasonCompatible  = "an IPv4-compatible IPv6 address"
	reasonNotIP       = "not an IP address"
)

// refused are the prefixes the rule refuses, with the kind of address
// each holds. IPv4-mapped and NAT64 IPv6 addresses are judged by the IPv4
// address they carry (Check), so the IPv4 entries cover them too.
var refused = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), reasonThisNetwork},
	{netip.MustParsePrefix("127.0.0.0/8"), reasonLoopback},
	{netip.MustParsePrefix("10.0.0.0/8"), reasonPrivate},
	{netip.MustParsePrefix("172.16.0.0/12"), reasonPrivate},
	{netip.MustParsePrefix("192.168.0.0/16"), reasonPrivate},
	{netip.MustParsePrefix("100.64.0.0/10"), reasonShared},
	{netip.MustParsePrefix("169.254.169.254/32"), reasonMetadata},
	{netip.MustParsePrefix("169.254.0.0/16"), reasonLinkLocal},
	// IETF protocol assignments; 192.0.0.192 is a cloud metadata address.
	{netip.MustParsePrefix("192.0.0.0/24"), reasonReserved},
	{netip.MustParsePrefix("224.0.0.0/4"), reasonMulticast},
	// Class E and the limited broadcast address.
	{netip.MustParsePrefix("240.0.0.0/4"), reasonReserved},

	{netip.MustParsePrefix("::1/128"), reasonLoopback},
	{netip.MustParsePrefix("fe80::/10"), reasonLinkLocal},
	// Unique local addresses; fd00:ec2::254 is a cloud metadata address.
	{netip.MustParsePrefix("fc00::/7"), reasonPrivate},
	// Site-local, deprecated but still routed by some stacks.
	{netip.MustParsePrefix("fec0::/10"), reasonPrivate},
	// Local-use NAT64: translates to the operator's own IPv4 networks.
	{netip.MustParsePrefix("64:ff9b:1::/48"), reasonPrivate},
	{netip.MustParsePrefix("ff00::/8"), reasonMulticast},
	// IPv4-compatible (deprecated); :: and ::1 are matched before.
	{netip.MustParsePrefix("::/96"), reasonCompatible},
}

// nat64 is the well-known NAT64 prefix: its addresses reach the IPv4
// address in their last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Check returns nil when addr may be dialled on a tenant's behalf, else an
// *Error saying what kind of address it is. It refuses unspecified,
// loopback, link-local, private (RFC 1918, unique local), shared
// (100.64.0.0/10), multicast and reserved addresses, and IPv4-mapped or
// NAT64 IPv6 addresses that carry one of those. A zone (fe80::1%eth0) is
// ignored. It never dials nor resolves.
func Check(addr netip.Addr) error {
	if !addr.IsValid() {
		return &Error{Reason: reasonNotIP}
	}
	if reason := classify(addr); reason != "" {
		return &Error{Addr: addr, Reason: reason}
	}
	return nil
}

// classify returns the kind of a refused address, "" for one the rule
// allows.
func classify(addr netip.Addr) string {
	a := addr.WithZone("") // a prefix never contains an address with a zone
	switch {
	case a.Is4In6():
		a = a.Unmap()
	case nat64.Contains(a):
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	if a.IsUnspecified() {
		return reasonUnspecified
	}
	for _, r := range refused {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	return ""
}
