package channeltest

import (
	"net/http"
	"time"
)

// HTTP returns a client for channel.Deps that reaches receivers on
// loopback, which channel.DefaultHTTP refuses (internal/netguard): a
// plain transport and DefaultHTTP's 10 s timeout.
func HTTP() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
}
