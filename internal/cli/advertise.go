package cli

import (
	"fmt"
	"net"
	"strings"
)

// resolveAdvertise decides the addresses the node tells its peers:
// --advertise-http and --advertise-raft as given, else --advertise-addr (or
// the listener's own host) with the listener's port; gossip advertises
// --advertise-addr (or its own host) with its port. An address a peer
// cannot dial (0.0.0.0, ::, no host) is refused, whether given or
// defaulted; a --dev node has no peers, so only what is given is checked.
func (c *controlConfig) resolveAdvertise() error {
	if c.advertiseAddr != "" {
		if net.ParseIP(c.advertiseAddr) == nil && strings.ContainsAny(c.advertiseAddr, ":[]") {
			return usageError{fmt.Sprintf("--advertise-addr %q must be an IP or host name, without a port", c.advertiseAddr)}
		}
		if unspecifiedHost(c.advertiseAddr) {
			return usageError{fmt.Sprintf("--advertise-addr %s is not an address peers can reach: give this node's own IP or host name", c.advertiseAddr)}
		}
	}
	var err error
	if c.advHTTP, err = advertiseFor("--http-addr", c.httpAddr, "--advertise-http", c.advertiseHTTP, c.advertiseAddr, c.dev); err != nil {
		return err
	}
	if c.advRaft, err = advertiseFor("--raft-addr", c.raftAddr, "--advertise-raft", c.advertiseRaft, c.advertiseAddr, c.dev); err != nil {
		return err
	}
	if c.gossipAddr != "" {
		if c.advGossip, err = advertiseFor("--gossip-addr", c.gossipAddr, "", "", c.advertiseAddr, c.dev); err != nil {
			return err
		}
	}
	return nil
}

// advertiseFor is the advertised address of the listener bound by
// bindFlag: the specific flag's host:port when given, else general (or
// the bound host) with the bound port. With lenient (a dev node), a
// default that is not dialable is left empty: the node keeps its bound
// address.
func advertiseFor(bindFlag, bind, specificFlag, specific, general string, lenient bool) (string, error) {
	if specific != "" {
		host, port, err := net.SplitHostPort(specific)
		if err != nil || host == "" || port == "" {
			return "", usageError{fmt.Sprintf("%s %q must be host:port", specificFlag, specific)}
		}
		if unspecifiedHost(host) {
			return "", usageError{fmt.Sprintf("%s %s is not an address peers can reach: give this node's own IP or host name", specificFlag, specific)}
		}
		return specific, nil
	}
	bhost, port, err := net.SplitHostPort(bind)
	if err != nil {
		return "", usageError{fmt.Sprintf("%s %q must be host:port", bindFlag, bind)}
	}
	host := general
	if host == "" {
		host = bhost
	}
	if host == "" || unspecifiedHost(host) {
		if lenient {
			return "", nil
		}
		also := ""
		if specificFlag != "" {
			also = " (or " + specificFlag + ")"
		}
		return "", usageError{fmt.Sprintf("%s %s listens on every interface, an address peers cannot dial: give --advertise-addr%s with the address they reach this node at", bindFlag, bind, also)}
	}
	return net.JoinHostPort(host, port), nil
}

// unspecifiedHost tells whether host is 0.0.0.0 or :: (any interface).
func unspecifiedHost(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// advertisedHTTP is the HTTP address peers forward to: adv with the
// listener's port when adv's is 0, or the listener's address when adv is
// empty (a dev node).
func advertisedHTTP(adv string, ln net.Addr) string {
	if adv == "" {
		return ln.String()
	}
	host, port, _ := net.SplitHostPort(adv)
	if port == "0" {
		_, port, _ = net.SplitHostPort(ln.String())
	}
	return net.JoinHostPort(host, port)
}
