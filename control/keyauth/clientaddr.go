package keyauth

import (
	"net/http"

	"lookout/internal/clientaddr"
)

// ClientAddr is the address a request is limited or throttled by when it
// has no valid key (clientaddr.Key): the client's IP, behind a trusted
// proxy the nearest untrusted X-Forwarded-For hop (lookout control
// --trusted-proxies), and for IPv6 its /64.
func ClientAddr(r *http.Request) string { return clientaddr.Key(r) }
