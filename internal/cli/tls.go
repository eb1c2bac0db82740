package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"lookout/internal/tlsconf"
)

// loadTLS loads the node's certificate, key and CA (nil without
// --tls-cert: the node serves cleartext HTTP).
func loadTLS(cfg *controlConfig) (*tlsconf.Certs, error) {
	if cfg.tls.Cert == "" {
		return nil, nil
	}
	return tlsconf.Load(cfg.tls)
}

// reloadOnSIGHUP reloads certs at each SIGHUP until ctx ends: connections
// made afterwards (HTTPS, raft, node-to-node RPC) present the new
// certificate. A certificate that fails to load is logged and the
// previous one stays in use.
func reloadOnSIGHUP(ctx context.Context, certs *tlsconf.Certs, log hclog.Logger) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP)
	defer signal.Stop(sigs)
	reloadOn(ctx, sigs, certs, log)
}

// reloadOn reloads certs at each value of sigs until ctx ends.
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
