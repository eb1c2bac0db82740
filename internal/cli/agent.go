package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"lookout/agent"
	"lookout/agent/assign"
	"lookout/agent/link"
	"lookout/agent/region"
	"lookout/internal/agentident"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	"lookout/internal/httpserver"
	"lookout/internal/metrics"
	"lookout/internal/names"
	"lookout/internal/netguard"
	"lookout/internal/tlsconf"
)

// defaultBufferMaxBytes bounds the agent's disk buffer (1 GiB).
const defaultBufferMaxBytes = 1 << 30

// agentConfig is the parsed command line of lookout agent.
type agentConfig struct {
	control        listFlag
	token          string
	region         string
	dataDir        string
	name           string
	httpAddr       string
	gossipAddr     string
	join           listFlag
	bufferMaxBytes int64
	caFile         string
	tlsCert        string
	tlsKey         string
	metricsToken   string
	logLevel       string
	// denyPrivate applies the control plane's address rule to the
	// agent's probes (--deny-private-targets).
	denyPrivate bool
	checkShare  *shareFlag
}

func parseAgent(args []string, getenv func(string) string, stderr io.Writer) (*agentConfig, error) {
	c := &agentConfig{}
	fs := flag.NewFlagSet("lookout agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&c.control, "control", "control node URLs (http:// or https://), comma-separated, tried in turn (required)")
	fs.StringVar(&c.token, "token", "", "agent token (at_...) made with lookout admin agent-token create; LOOKOUT_TOKEN keeps it off the command line (required)")
	fs.StringVar(&c.region, "region", "", "the agent's region; must be the token's (required)")
	fs.StringVar(&c.dataDir, "data-dir", "", "where the agent keeps its id, its last assignments and its buffer (required)")
	fs.StringVar(&c.name, "name", "", "the agent's name, shown on its executions (default: the host name)")
	fs.StringVar(&c.httpAddr, "http-addr", "127.0.0.1:8090", "local listener: the Ingest API for local jobs (/ping, /health) and /metrics")
	fs.StringVar(&c.gossipAddr, "gossip-addr", "", "gossip (memberlist) listener, TCP and UDP, to meet the region's other agents, encrypted with the region's key the control plane hands out (default: none, a region of one)")
	fs.Var(&c.join, "join", "gossip addresses of other agents of the region, comma-separated")
	fs.Int64Var(&c.bufferMaxBytes, "buffer-max-bytes", defaultBufferMaxBytes, "bound of the disk buffer; when full, pings get 503 buffer_full and the oldest check results are dropped")
	fs.StringVar(&c.caFile, "ca-file", "", "PEM CA certificate(s) to verify https:// control nodes with (default: the system roots)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM client certificate to present to the control nodes (mutual TLS)")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&c.metricsToken, "metrics-token", "", "bearer token GET /metrics requires (default: none, /metrics is open)")
	fs.StringVar(&c.logLevel, "log-level", "info", "trace, debug, info, warn or error")
	fs.BoolVar(&c.denyPrivate, "deny-private-targets", false, "refuse checks of loopback, private, link-local (cloud metadata) and other internal addresses, as the control plane does (default: the agent probes any address)")
	c.checkShare = defineShare(fs, "account-check-share", "checks the agent runs (retry waits included; an agent whose token names no accounts serves every account of its region)")
	if err := parseWithEnv(fs, args, getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Sprintf("lookout agent takes no arguments, got %q", fs.Args())}
	}
	switch {
	case len(c.control) == 0:
		return nil, usageError{"--control URL[,URL] (or LOOKOUT_CONTROL) is required"}
	case c.token == "":
		return nil, usageError{"--token (or LOOKOUT_TOKEN) is required: an agent token made by the operator"}
	case c.region == "":
		return nil, usageError{"--region (or LOOKOUT_REGION) is required"}
	case c.dataDir == "":
		return nil, usageError{"--data-dir (or LOOKOUT_DATA_DIR) is required"}
	case (c.tlsCert == "") != (c.tlsKey == ""):
		return nil, usageError{"--tls-cert and --tls-key go together"}
	case c.bufferMaxBytes < 1<<20:
		return nil, usageError{"--buffer-max-bytes must be at least 1048576 (1 MiB)"}
	case len(c.join) > 0 && c.gossipAddr == "":
		return nil, usageError{"--join needs --gossip-addr (the address this agent gossips on)"}
	}
	for _, u := range c.control {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, usageError{fmt.Sprintf("--control %q: want http://host:port or https://host:port", u)}
		}
	}
	if c.name == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("--name not given and no host name: %w", err)
		}
		if err := names.Check(host); err != nil {
			return nil, usageError{fmt.Sprintf("--name not given, and the host name %+q cannot be shown as one: it %v", host, err)}
		}
		c.name = host
	}
	// The panel, the operator API and executions show it.
	if err := agentident.CheckName(c.name); err != nil {
		return nil, usageError{"--name (or the host name): " + err.Error()}
	}
	return c, nil
}

// agentTLS is the TLS config of the agent's link: control nodes verified
// against --ca-file (the system roots without it), and with
// --tls-cert/--tls-key a client certificate.
func agentTLS(c *agentConfig) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.caFile != "" {
		pool, err := tlsconf.LoadPool(c.caFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		cfg.RootCAs = pool
	}
	if c.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// runAgent is the composition root of an edge agent: logger, id, link
// to the control plane, last assignments from disk, region pool, disk
// buffer, the agent's loops, and the local HTTP listener (ingest and
// metrics).
func runAgent(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, ok, err := parseRole(func(out io.Writer) (*agentConfig, error) { return parseAgent(args, getenv, out) }, stdout, stderr)
	if !ok {
		return err
	}
	return serveAgent(ctx, cfg, openAgentLocal, stderr, nil)
}

// openLocalFunc opens the agent's disk buffer and local ingest; recovered
// is called after the buffer recovered from the removal of its directory.
type openLocalFunc func(cfg *agentConfig, log hclog.Logger, reg prometheus.Registerer, recovered func()) (*agentLocal, error)

// serveAgent runs the agent of cfg until ctx ends; openLocal opens its
// buffer and ingest; started, if set, gets the local listener's address.
func serveAgent(ctx context.Context, cfg *agentConfig, openLocal openLocalFunc, stderr io.Writer, started func(httpAddr string)) error {
	var err error

	// One logger, a named child per part.
	log := hclog.New(&hclog.LoggerOptions{Name: "lookout-agent", Level: hclog.LevelFromString(cfg.logLevel), Output: stderr})

	// The agent's id, random on first start, kept in the data dir.
	id, err := agent.LoadID(cfg.dataDir)
	if err != nil {
		return err
	}

	// The local listener first, so a taken port fails before anything
	// else starts.
	ln, err := net.Listen("tcp", cfg.httpAddr)
	if err != nil {
		return fmt.Errorf("listen on --http-addr %s: %w", cfg.httpAddr, err)
	}
	defer ln.Close()

	// The link to the control plane: every URL in turn, the token on
	// every call, TLS verified against --ca-file.
	tlsCfg, err := agentTLS(cfg)
	if err != nil {
		return err
	}
	lk, err := link.New(link.Options{
		URLs: cfg.control, Token: cfg.token, TLS: tlsCfg, Logger: log.Named("link"),
		Agent: &agentv1.AgentIdentity{Id: id, Name: cfg.name, Version: Version},
	})
	if err != nil {
		return usageError{"--control: " + err.Error()}
	}
	defer lk.CloseIdle()

	// The last assignments, from disk: a restarted agent that is cut off
	// keeps probing and accepting pings.
	store, err := assign.Open(cfg.dataDir)
	if err != nil {
		return err
	}
	if err := store.Dropped(); err != nil {
		log.Warn("the last assignments were dropped; they are asked for again", "error", err)
	}
	if r := store.Region(); r != "" && r != cfg.region {
		return usageError{fmt.Sprintf("--data-dir %s holds the assignments of region %q, not --region %q: use another data dir", cfg.dataDir, r, cfg.region)}
	}
	if nc, nk := store.Counts(); nc+nk > 0 {
		log.Info("last assignments read from disk", "checks", nc, "keys", nk)
	}

	// The region's pool: who runs each check. Its address is bound now;
	// it gossips only with the region's key, which the agent gives it from
	// the last assignments or, on a first start, once the control plane
	// hands it out.
	pool, err := region.New(region.Options{ID: id, Name: cfg.name, GossipAddr: cfg.gossipAddr, Join: cfg.join, Logger: log.Named("region")})
	if err != nil {
		return err
	}
	defer pool.Close() // leave: the others take this agent's checks at once

	// Metrics: the Go and process collectors and the agent's own.
	reg := metrics.NewRegistry()

	// The disk buffer and the local ingest (agent_local.go). When the
	// buffer's directory is removed under the agent, the buffer moves what
	// it held into a new one; the data dir may have gone with it, so the
	// id and the assignments are written again.
	local, err := openLocal(cfg, log, reg, func() {
		if err := agent.SaveID(cfg.dataDir, id); err != nil {
			log.Error("writing the agent id again failed", "error", err)
		}
		if err := store.Save(); err != nil {
			log.Error("writing the assignments again failed", "error", err)
		}
	})
	if err != nil {
		return err
	}
	defer local.Close()

	// The agent's loops: assignments, runner, forwarder and heartbeat.
	// With --deny-private-targets its probes dial through the address rule.
	ao := agent.Options{
		Name: cfg.name, Version: Version, Region: cfg.region,
		Link: lk, Store: store, Pool: pool, Buffer: local.Buffer, Registry: reg, Logger: log,
		AccountShare: cfg.checkShare.option(),
	}
	if cfg.denyPrivate {
		ao.DialContext = netguard.New(netguard.Options{}).DialContext
	}
	a := agent.New(ao)

	// The local HTTP listener: the Ingest API for local jobs, /metrics.
	mux := http.NewServeMux()
	mux.Handle("/", local.Ingest(store, a.Forwarder(), lk, pool))
	mux.Handle("GET /metrics", metrics.Handler(reg, metrics.HandlerOptions{Token: cfg.metricsToken}))
	srv := httpserver.New(mux, httpserver.Options{})

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := a.Run(gctx)
		if errors.Is(err, assign.ErrIdentityRefused) {
			return fmt.Errorf("%w: the agent's id is in %s and its name is --name; fix them "+
				"(remove the id file for a new id) and start the agent again", err, filepath.Join(cfg.dataDir, agent.IDFile))
		}
		return err
	})
	if local.Failed != nil {
		// A buffer that cannot recover stops the agent: its supervisor
		// starts it again on what the disk then holds.
		g.Go(func() error {
			select {
			case <-gctx.Done():
				return nil
			case <-local.Failed:
				return fmt.Errorf("the disk buffer failed; start the agent again once the disk is fixed (what the buffer held is read again): %w", local.Health())
			}
		})
	}
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http server: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	log.Info("agent running", "id", id, "name", cfg.name, "region", cfg.region, "control", cfg.control,
		"http", "http://"+ln.Addr().String(), "gossip", pool.Addr())
	if started != nil {
		started(ln.Addr().String())
	}
	err = g.Wait()
	if ctx.Err() != nil && err == nil {
		log.Info("stopped")
	}
	return err
}
