package keyauth

import (
	"net"
	"net/http"
)

// ClientAddr is the address a request is limited or throttled by when it
// has no valid key: the remote IP, and for IPv6 its /64 (one host usually
// has a whole /64, so counting its addresses one by one would count
// nothing).
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() != nil {
		return ip.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
