package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/internal/tlsconf"
)

// clientTimeout bounds a request of the operator and management commands.
const clientTimeout = 30 * time.Second

// httpClient is the HTTP client of the lookout commands that talk to a
// node: requests bounded by timeout (clientTimeout when 0), and with
// caFile (--ca-file, LOOKOUT_CA_FILE) an https:// node verified against
// that CA instead of the system roots.
func httpClient(caFile string, timeout time.Duration) (*http.Client, error) {
	if timeout <= 0 {
		timeout = clientTimeout
	}
	c := &http.Client{Timeout: timeout}
	if caFile == "" {
		return c, nil
	}
	pool, err := tlsconf.LoadPool(caFile)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	c.Transport = tr
	return c, nil
}

// loadTLS loads the node's certificate, key and CA (nil without
// --tls-cert: the node serves cleartext HTTP).
func loadTLS(cfg *controlConfig) (*tlsconf.Certs, error) {
	if cfg.tls.Cert == "" {
		return nil, nil
	}
	return tlsconf.Load(cfg.tls)
}

// notifySIGHUP catches SIGHUP from now on (it no longer ends the
// process) until stop.
func notifySIGHUP() (sigs <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// reloadOn reloads certs at each value of sigs (SIGHUP) until ctx ends:
// connections made afterwards (HTTPS, raft, node-to-node RPC) present the
// new certificate. A certificate that fails to load is logged and the
// previous one stays in use.
func reloadOn(ctx context.Context, sigs <-chan os.Signal, certs *tlsconf.Certs, log hclog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sigs:
			if err := certs.Reload(); err != nil {
				log.Error("TLS certificate not reloaded; the previous one stays in use", "error", err)
				continue
			}
			log.Info("TLS certificate reloaded")
		}
	}
}
