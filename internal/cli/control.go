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
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sync/errgroup"

	"lookout/cluster"
	"lookout/control/admin"
	"lookout/control/agentrpc"
	"lookout/control/alert"
	"lookout/control/alert/channel"
	"lookout/control/alert/channelregistry"
	"lookout/control/engine"
	"lookout/control/ingest"
	"lookout/control/manage"
	"lookout/control/openapi"
	"lookout/control/panel"
	"lookout/control/presence"
	"lookout/control/public"
	"lookout/control/state"
	"lookout/internal/clientaddr"
	"lookout/internal/httpserver"
	"lookout/internal/metrics"
	"lookout/internal/netguard"
	"lookout/internal/ratelimit"
	"lookout/internal/tlsconf"
)

// defaultRaftTimeout is --raft-timeout's default: a failover within a
// second on a LAN, where raft's own default (1s) takes one to two. A
// follower votes for no one while it still has a leader, so an election
// waits for the later of the two survivors' timeouts (between one and two
// of it): 500ms gave a median of 1.1s, 350ms 0.6s.
const defaultRaftTimeout = 350 * time.Millisecond

// controlConfig is the parsed command line of lookout control.
type controlConfig struct {
	dev             bool
	nodeID          string
	dataDir         string
	httpAddr        string
	raftAddr        string
	gossipAddr      string
	bootstrapExpect int
	join            listFlag
	adminToken      string
	removeGoneAfter time.Duration
	retentionCount  int64
	retentionAge    time.Duration
	logLevel        string
	smtp            channel.SMTPSettings
	publicURL       string
	alertRetryFor   time.Duration
	alertRetention  time.Duration
	auditRetention  time.Duration
	// agentOfflineAfter: a region with no agent seen this long is offline.
	agentOfflineAfter time.Duration
	// raftTimeout: how long followers go without the leader's heartbeats
	// before they elect another (raft's heartbeat and election timeouts;
	// the leader's lease is half of it).
	raftTimeout time.Duration
	// outageAfter: a leader that starts this long after the last one was
	// alive ends an outage of the whole service (control/state/outage.go).
	outageAfter time.Duration
	// agentForgetAfter: an agent not seen this long is forgotten (0: never).
	agentForgetAfter time.Duration

	// --advertise-*, and what the node tells its peers (resolveAdvertise):
	// "" keeps the bound address, a port of 0 means the bound port.
	advertiseAddr, advertiseHTTP, advertiseRaft string
	advHTTP, advRaft, advGossip                 string
	maxConnections                              int
	execRetention                               int64
	metricsToken                                string
	tls                                         tlsconf.Files
	// allowPrivate turns the address rule off for checks without regions
	// and alert channels (--allow-private-targets; on with --dev unless
	// given false).
	allowPrivate bool
	// trustedProxies: peers whose X-Forwarded-For names the client.
	trustedProxies []netip.Prefix
	// Per-account shares of the leader's check workers and alert slots.
	checkShare, alertShare *shareFlag
	// oidc: the panel's single sign-on.
	oidc *oidcFlags
	// memoryLimit: the Go runtime's soft memory limit (memlimit.go).
	memoryLimit memoryLimit
}

func parseControl(args []string, getenv func(string) string, stderr io.Writer) (*controlConfig, error) {
	c := &controlConfig{memoryLimit: memoryLimit{auto: true}}
	fs := flag.NewFlagSet("lookout control", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&c.dev, "dev", false, "run a single-node cluster that bootstraps itself and creates a demo account")
	fs.StringVar(&c.nodeID, "node-id", "", "this node's id, stable across restarts (default: the host name; \"dev\" with --dev)")
	fs.StringVar(&c.dataDir, "data-dir", "./lookout-data", "where the node keeps its data")
	fs.StringVar(&c.httpAddr, "http-addr", "127.0.0.1:8080", "HTTP listener: Ingest, Management and operator APIs, node RPC")
	fs.StringVar(&c.raftAddr, "raft-addr", "127.0.0.1:8300", "raft listener, reachable by the other nodes")
	fs.StringVar(&c.gossipAddr, "gossip-addr", "127.0.0.1:8301", "gossip (memberlist) listener, TCP and UDP; unused with --dev")
	fs.StringVar(&c.advertiseAddr, "advertise-addr", "", "IP or host name peers reach this node at, for HTTP, raft and gossip (default: each listener's own address, which must then not be 0.0.0.0 or ::)")
	fs.StringVar(&c.advertiseHTTP, "advertise-http", "", "host:port peers forward requests to (default: --advertise-addr with the --http-addr port)")
	fs.StringVar(&c.advertiseRaft, "advertise-raft", "", "host:port peers replicate raft to (default: --advertise-addr with the --raft-addr port)")
	fs.IntVar(&c.bootstrapExpect, "bootstrap-expect", 0, "servers that must meet before one bootstraps the cluster (0: join an existing cluster)")
	fs.Var(&c.join, "join", "gossip addresses of other nodes, comma-separated")
	fs.StringVar(&c.adminToken, "admin-token", "", "operator token for /admin/v1; also secures node-to-node traffic (required without --dev)")
	fs.DurationVar(&c.removeGoneAfter, "remove-gone-after", 72*time.Hour, "remove a server from raft after it is gone from gossip this long")
	fs.Int64Var(&c.retentionCount, "event-retention-count", 1000, "events kept per monitor (older ones are dropped as new ones arrive)")
	fs.Int64Var(&c.execRetention, "execution-retention-count", 1000, "check executions kept per check (older ones are dropped as new ones arrive; at most 10000)")
	fs.DurationVar(&c.retentionAge, "event-retention-age", 90*24*time.Hour, "events older than this are deleted")
	fs.StringVar(&c.logLevel, "log-level", "info", "trace, debug, info, warn or error")
	fs.DurationVar(&c.alertRetryFor, "alert-retry-for", 24*time.Hour, "how long an alert's failed deliveries are retried")
	fs.DurationVar(&c.alertRetention, "alert-retention", 30*24*time.Hour, "how long an alert is kept after its last delivery is delivered or given up")
	fs.DurationVar(&c.auditRetention, "audit-retention", 90*24*time.Hour, "how long an entry of an account's audit log is kept (each account also keeps at most its newest 10,000)")
	fs.DurationVar(&c.raftTimeout, "raft-timeout", defaultRaftTimeout, "how long followers go without hearing from the leader before they elect another: a failover takes about one to two of it (raft's heartbeat and election timeouts; the leader's lease is half of it). The default suits a LAN; 1s to 2s for nodes in different data centres. At least 100ms")
	fs.DurationVar(&c.outageAfter, "outage-after", engine.DefaultOutageAfter, "a leader that starts this long after the last leader was alive ends an outage of the whole service: ping monitor deadlines that fell in it restart from then instead of alerting missed (at least 10s; leaders mark themselves alive every 5 s)")
	fs.DurationVar(&c.agentOfflineAfter, "agent-offline-after", presence.DefaultOfflineAfter, "an agent region none of whose agents was seen this long is offline: one agent.offline alert per account, its monitors unknown (at least 10s)")
	fs.DurationVar(&c.agentForgetAfter, "agent-forget-after", presence.DefaultForgetAfter, "forget an agent not seen this long (its record goes; a region left without agents is no longer judged); 0: never (at least 1h)")
	fs.StringVar(&c.publicURL, "public-url", "", "the address people reach this service at, for links in alerts (default: http://<http-addr>, https:// with --tls-cert)")
	fs.StringVar(&c.smtp.Addr, "smtp-addr", "", "SMTP server (host:port) for e-mail alerts; port 465 is TLS from the start, other ports use --smtp-starttls (default: none, e-mail channels are refused)")
	fs.StringVar(&c.smtp.StartTLS, "smtp-starttls", channel.StartTLSOpportunistic, "STARTTLS on an --smtp-addr port other than 465: opportunistic (when the server offers it), required (refuse to send without it) or off")
	fs.StringVar(&c.smtp.User, "smtp-user", "", "SMTP user, AUTH PLAIN or LOGIN (whichever the server offers), sent only over TLS or to a server on loopback (default: no authentication)")
	fs.StringVar(&c.smtp.Password, "smtp-password", "", "SMTP password (env LOOKOUT_SMTP_PASSWORD keeps it off the command line)")
	fs.IntVar(&c.maxConnections, "max-connections", httpserver.DefaultMaxConnections, "open public HTTP connections served at once (node and agent RPC have a reserve of their own); more wait until one closes")
	fs.StringVar(&c.metricsToken, "metrics-token", "", "bearer token GET /metrics requires (default: none, /metrics is open)")
	fs.StringVar(&c.smtp.From, "smtp-from", "", "sender address of e-mail alerts (default: --smtp-user when it is an address)")
	fs.StringVar(&c.tls.Cert, "tls-cert", "", "PEM certificate (chain) to serve HTTPS with; reloaded on SIGHUP (default: none, cleartext HTTP)")
	fs.StringVar(&c.tls.Key, "tls-key", "", "PEM private key of --tls-cert; reloaded on SIGHUP")
	trusted := fs.String("trusted-proxies", "", "CIDR[,CIDR] of the load balancers or reverse proxies in front of the node: from them the client address (which every throttle and rate limit counts by) is the nearest untrusted X-Forwarded-For hop (default: none, the TCP peer is the client)")
	fs.StringVar(&c.tls.CA, "tls-ca", "", "PEM CA certificate(s): with it node-to-node traffic (raft, RPC) is mutual TLS, peers verified against it (default: peers verified against the system roots, raft in cleartext)")
	fs.BoolVar(&c.allowPrivate, "allow-private-targets", false, "let checks without regions and alert channels reach loopback, private, link-local (cloud metadata) and other internal addresses (default: refused, \"target not allowed\"; on with --dev unless given false)")
	c.checkShare = defineShare(fs, "account-check-share", "checks the leader runs (of its 64 workers; retry waits included)")
	c.alertShare = defineShare(fs, "account-alert-share", "alert deliveries the leader has under way (of its 16 slots)")
	c.oidc = defineOIDC(fs)
	fs.Var(&c.memoryLimit, "memory-limit", "soft limit of the node's memory, as GOMEMLIMIT reads it (1GiB, 900MiB; 0 or off: none): the Go collector works harder near it rather than let the heap grow to twice what is live. auto: GOMEMLIMIT when set, else 3/4 of the cgroup's memory limit (a container's) when there is one, else 768MiB, which suits a node of up to a million monitors")
	if err := parseWithEnv(fs, args, getenv); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Sprintf("lookout control takes no arguments, got %q", fs.Args())}
	}
	if c.dev && !isSet(fs, "allow-private-targets") {
		// A dev node's user is its own operator, checking localhost.
		c.allowPrivate = true
	}
	var err error
	if c.trustedProxies, err = clientaddr.ParseTrusted(*trusted); err != nil {
		return nil, usageError{"--trusted-proxies: " + err.Error()}
	}
	if (c.tls.Cert == "") != (c.tls.Key == "") {
		return nil, usageError{"--tls-cert and --tls-key go together"}
	}
	if c.tls.CA != "" && c.tls.Cert == "" {
		return nil, usageError{"--tls-ca needs --tls-cert and --tls-key (the certificate the node presents to its peers)"}
	}
	if err := checkSMTP(c.smtp); err != nil {
		return nil, err
	}
	if err := c.oidc.check(c.publicURL); err != nil {
		return nil, err
	}
	switch {
	case c.dev:
		if c.nodeID == "" {
			c.nodeID = "dev"
		}
		if c.bootstrapExpect > 1 || len(c.join) > 0 {
			return nil, usageError{"--dev runs one node alone: drop --bootstrap-expect and --join"}
		}
		c.bootstrapExpect, c.gossipAddr = 1, ""
	default:
		if c.nodeID == "" {
			host, err := os.Hostname()
			if err != nil {
				return nil, fmt.Errorf("--node-id not given and no host name: %w", err)
			}
			c.nodeID = host
		}
		if c.adminToken == "" {
			return nil, usageError{"--admin-token (or LOOKOUT_ADMIN_TOKEN) is required without --dev: it protects /admin/v1 and node-to-node traffic"}
		}
		if c.bootstrapExpect == 0 && len(c.join) == 0 {
			return nil, usageError{"give --bootstrap-expect N (a new cluster) or --join ADDR (an existing one), or run --dev"}
		}
	}
	if c.bootstrapExpect < 0 {
		return nil, usageError{"--bootstrap-expect must be 0 or more"}
	}
	if c.alertRetryFor < time.Minute {
		return nil, usageError{"--alert-retry-for must be at least 1m"}
	}
	if c.raftTimeout < 100*time.Millisecond {
		return nil, usageError{"--raft-timeout must be at least 100ms"}
	}
	if c.outageAfter < 10*time.Second {
		return nil, usageError{"--outage-after must be at least 10s (leaders mark themselves alive every 5 s; a failover is not an outage)"}
	}
	if c.agentOfflineAfter < 10*time.Second {
		return nil, usageError{"--agent-offline-after must be at least 10s (agents heartbeat every 5 s)"}
	}
	if c.agentForgetAfter != 0 && c.agentForgetAfter < max(time.Hour, c.agentOfflineAfter) {
		return nil, usageError{"--agent-forget-after must be 0 (never) or at least 1h and --agent-offline-after"}
	}
	if c.maxConnections < 1 {
		return nil, usageError{"--max-connections must be at least 1"}
	}
	if c.alertRetention < time.Hour {
		return nil, usageError{"--alert-retention must be at least 1h"}
	}
	if c.auditRetention < time.Hour {
		return nil, usageError{"--audit-retention must be at least 1h"}
	}
	if c.retentionCount < 1 || c.retentionAge < time.Hour {
		return nil, usageError{"--event-retention-count must be at least 1 and --event-retention-age at least 1h"}
	}
	if c.execRetention < 1 || c.execRetention > state.MaxExecutionRetention {
		return nil, usageError{fmt.Sprintf("--execution-retention-count must be 1 to %d", state.MaxExecutionRetention)}
	}
	if err := c.resolveAdvertise(); err != nil {
		return nil, err
	}
	return c, nil
}

// runControl is the composition root of a control node: logger, HTTP
// listener, cluster node (stores, raft, gossip, leader tasks), the APIs on
// one mux, the HTTP server, and in dev mode the demo account.
func runControl(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, ok, err := parseRole(func(out io.Writer) (*controlConfig, error) { return parseControl(args, getenv, out) }, stdout, stderr)
	if !ok {
		return err
	}

	// One logger, a named child per subsystem.
	log := hclog.New(&hclog.LoggerOptions{Name: "lookout", Level: hclog.LevelFromString(cfg.logLevel), Output: stderr})

	// The soft memory limit, before the stores fill the heap.
	setMemoryLimit(cfg.memoryLimit, getenv, log)

	// The operator token: given, or (dev only) generated once and kept.
	printToken := false
	if cfg.adminToken == "" {
		if cfg.adminToken, printToken, err = devAdminToken(cfg.dataDir); err != nil {
			return err
		}
	}

	// The HTTP listener first, so its real address (port 0 works) is what
	// the node advertises to its peers.
	ln, err := net.Listen("tcp", cfg.httpAddr)
	if err != nil {
		return fmt.Errorf("listen on --http-addr %s: %w", cfg.httpAddr, err)
	}
	defer ln.Close()

	// TLS: the node's certificate (reloaded on SIGHUP) and CA.
	certs, err := loadTLS(cfg)
	if err != nil {
		return err
	}
	scheme := "http://"
	var serverTLS, clientTLS, peerTLS *tls.Config
	if certs != nil {
		scheme = "https://"
		serverTLS, clientTLS, peerTLS = certs.ServerConfig(), certs.ClientConfig(), certs.PeerServerConfig()
	}

	// One metrics registry for the node (Go and process collectors
	// included); each subsystem gets its part through its Options.
	reg := metrics.NewRegistry()
	met := metrics.NewControl(reg)
	limitMetrics := ratelimit.NewMetrics(reg)

	// The alert channels, with the operator's SMTP server: saved channel
	// configs are validated with it and alerts are sent through it. Their
	// HTTP requests dial through the address rule (cfg.targets).
	// Many alerts go to one host (a chat service's webhooks): the
	// dispatcher's concurrent sends keep their connections for the next.
	alertTransport := cfg.targets().Transport()
	alertTransport.MaxIdleConnsPerHost = alert.DefaultConcurrency
	channelRegistry := channelregistry.New(channel.Deps{SMTP: cfg.smtp, HTTP: &http.Client{Timeout: 10 * time.Second, Transport: alertTransport}})
	if cfg.allowPrivate {
		log.Warn("private targets allowed: checks without regions and alert channels may reach loopback, private and link-local addresses")
	}
	httpAdvertised := advertisedHTTP(cfg.advHTTP, ln.Addr())
	publicURL := cfg.publicURL
	if publicURL == "" {
		publicURL = scheme + httpAdvertised
	}

	// The replicated state in Badger, closed after the node that drives it.
	st, err := state.Open(state.Options{Dir: filepath.Join(cfg.dataDir, "state"), Logger: log.Named("state")})
	if err != nil {
		return err
	}
	defer st.Close()

	// The cluster node: raft log (raft-wal), raft, gossip.
	node, err := cluster.New(cluster.Options{
		NodeID:          cfg.nodeID,
		DataDir:         cfg.dataDir,
		State:           st,
		RaftAddr:        cfg.raftAddr,
		RaftAdvertise:   cfg.advRaft,
		HTTPAddr:        httpAdvertised,
		GossipAddr:      cfg.gossipAddr,
		GossipAdvertise: cfg.advGossip,
		Join:            cfg.join,
		BootstrapExpect: cfg.bootstrapExpect,
		Secret:          []byte(cfg.adminToken),
		RemoveGoneAfter: cfg.removeGoneAfter,
		Raft: cluster.RaftTuning{
			HeartbeatTimeout: cfg.raftTimeout, ElectionTimeout: cfg.raftTimeout, LeaderLeaseTimeout: cfg.raftTimeout / 2,
		},
		// Leader-only work: deadlines, alert delivery, retention.
		LeaderTasks: leaderTasks(cfg, st, channelRegistry, publicURL, met, log),
		Version:     Version,
		Logger:      log.Named("cluster"),
		Metrics:     met.Cluster,
		ClientTLS:   clientTLS,
		PeerTLS:     peerTLS,
	})
	if err != nil {
		return err
	}
	defer node.Close()
	reg.MustRegister(metrics.NewRaftCollector(node.RaftStats))

	// The APIs, on one mux.
	mux := http.NewServeMux()
	rpcPath, rpcHandler := node.Handler()
	mux.Handle(rpcPath, rpcHandler)
	ingestAPI := ingest.New(ingest.Options{Health: node, Cluster: node, State: st, RetentionCount: cfg.retentionCount, RetentionAge: cfg.retentionAge, Metrics: met.Ingest, Limits: limitMetrics, Logger: log.Named("ingest")})
	ingestAPI.Register(mux)
	ingestAPI.Start()
	defer ingestAPI.Stop()
	// Agent presence: the agents' heartbeats, throttled, through raft.
	agentPresence := presence.NewRecorder(presence.RecorderOptions{Cluster: node, MinInterval: recordInterval(cfg.agentOfflineAfter),
		Metrics: met.Agents, Logger: log.Named("presence")})
	// The agent RPC, on the same listener (and TLS) as the rest: agents'
	// events go through the Ingest API's batcher; their heartbeats and
	// streams are reported to the presence recorder; each region's agents
	// get the gossip key every node derives for it from the cluster
	// secret.
	agentService := agentrpc.New(agentrpc.Options{
		State: st, Writer: node, Events: ingestAPI, Presence: presenceAdapter{agentPresence},
		NodeID: cfg.nodeID, GossipKey: regionGossipKeys([]byte(cfg.adminToken), log), Metrics: met.Agents,
		ExecutionRetention: cfg.execRetention, Logger: log.Named("agentrpc"),
	})
	agentPath, agentHandler := agentService.Handler()
	mux.Handle(agentPath, agentHandler)
	// The 403 of a DELETE without confirm links to the monitor in the panel:
	// at --public-url when given, else at the origin the request came to.
	manageAPI := manage.New(manage.Options{Cluster: node, State: st, PanelURL: strings.TrimRight(cfg.publicURL, "/"), Limits: limitMetrics, Logger: log.Named("manage")})
	manageAPI.Register(mux)
	adminAPI := admin.New(admin.Options{Cluster: node, State: st, Channels: channelRegistry, Token: cfg.adminToken, SpoolDir: cfg.dataDir, Limits: limitMetrics, Logger: log.Named("admin")})
	adminAPI.Register(mux)
	// The web panel at /, its sessions signed with a key every node
	// derives from the cluster secret; its monitor forms write through
	// the Management API's own code; its ping snippets name --public-url
	// (else the origin the page was asked at); with --oidc-issuer it signs
	// people in with the company's SSO too.
	panelKey, err := cluster.PanelKey([]byte(cfg.adminToken))
	if err != nil {
		return err
	}
	webPanel, err := panel.New(panel.Options{Cluster: node, State: st, Admin: adminAPI, Manage: manageAPI, Publishing: manageAPI,
		PublicURL: cfg.publicURL, SSO: cfg.oidc.options(), Key: panelKey, Secure: certs != nil, Limits: limitMetrics, Metrics: met.Panel, Logger: log.Named("panel")})
	if err != nil {
		return err
	}
	webPanel.Register(mux)
	webPanel.Start()
	defer webPanel.Stop()
	// Badges and status pages: read by anyone, cached per node, rate
	// limited per client address.
	publicPages, err := public.New(public.Options{State: st, Limits: limitMetrics, Logger: log.Named("public")})
	if err != nil {
		return err
	}
	publicPages.Register(mux)
	mux.Handle("GET /openapi.json", openapi.Handler())
	mux.Handle("GET /metrics", metrics.Handler(reg, metrics.HandlerOptions{Token: cfg.metricsToken, Limits: limitMetrics}))
	// Every request's client address, resolved once with the trusted
	// proxies, for the throttles and rate limits.
	handler := clientaddr.New(cfg.trustedProxies).Wrap(mux)
	// The HTTP server: HTTP/1.1 and h2c (or HTTPS with --tls-cert, and
	// HSTS), timeouts that drop silent, vanished or non-reading clients, at
	// most --max-connections public connections.
	srv := httpserver.New(handler, httpserver.Options{
		MaxConnections: cfg.maxConnections, TLS: serverTLS,
		// Node-to-node and agent RPC have a reserve of connections the
		// public APIs cannot take, and no write timeout (streams).
		RPCPrefixes: []string{rpcPath, agentPath}, NoWriteTimeout: streams,
	})

	g, gctx := errgroup.WithContext(ctx)
	if certs != nil {
		sighup, stop := notifySIGHUP()
		defer stop()
		g.Go(func() error {
			reloadOn(gctx, sighup, certs, log.Named("tls"))
			return nil
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
		webPanel.Stop()     // ends the live streams, which Shutdown would wait for
		agentService.Stop() // and the agents' assignment streams
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	base := scheme + ln.Addr().String()
	log.Info("control node serving", "node", cfg.nodeID, "http", base, "advertise_http", httpAdvertised, "raft", node.RaftAddr(), "gossip", node.GossipAddr())
	if cfg.dev {
		g.Go(func() error {
			return devWelcome(gctx, node, st, adminAPI, welcome{base: base, dataDir: cfg.dataDir, token: cfg.adminToken, printToken: printToken, allowPrivate: cfg.allowPrivate}, stdout)
		})
	}
	err = g.Wait()
	if ctx.Err() != nil && err == nil {
		log.Info("stopped")
	}
	return err
}

// targets is the dialer of every connection the node makes for a tenant
// (checks without regions, alert channels): the address rule, off with
// --allow-private-targets.
// checkSMTP refuses --smtp-* settings that cannot work: an address that
// is not host:port, an unknown --smtp-starttls, and a password that
// would only ever go in clear (never sent: every e-mail would fail).
func checkSMTP(s channel.SMTPSettings) error {
	switch s.StartTLS {
	case channel.StartTLSOpportunistic, channel.StartTLSRequired, channel.StartTLSOff:
	default:
		return usageError{fmt.Sprintf("--smtp-starttls %q must be opportunistic, required or off", s.StartTLS)}
	}
	if s.Addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return usageError{fmt.Sprintf("--smtp-addr %q must be host:port, e.g. smtp.example.com:587", s.Addr)}
	}
	ip := net.ParseIP(host)
	onLoopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if s.User != "" && s.StartTLS == channel.StartTLSOff && port != "465" && !onLoopback {
		return usageError{"--smtp-user with --smtp-starttls off: the password is only sent over TLS (port 465, or STARTTLS) or to a server on loopback"}
	}
	return nil
}

func (c *controlConfig) targets() *netguard.Guard {
	return netguard.New(netguard.Options{AllowPrivate: c.allowPrivate})
}

// streams are the requests the HTTP write timeout does not bound: the
// panel's live event streams, snapshot transfers and profiles.
func streams(r *http.Request) bool {
	return r.Header.Get("Accept") == "text/event-stream" || strings.HasSuffix(r.URL.Path, "/live") ||
		r.URL.Path == "/admin/v1/snapshot" || strings.HasPrefix(r.URL.Path, "/admin/v1/debug/pprof/")
}

// devAdminToken reads the dev node's operator token from the data
// directory, or makes one on first start (fresh reports that).
func devAdminToken(dataDir string) (token string, fresh bool, err error) {
	path := filepath.Join(dataDir, "admin-token")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), false, nil
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", false, fmt.Errorf("create data dir: %w", err)
	}
	token, err = randomSecret("adm_")
	if err != nil {
		return "", false, err
	}
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("save admin token: %w", err)
	}
	return token, true, nil
}

// regionGossipKeys derives the gossip key of a region's agents from the
// cluster secret (cluster.RegionGossipKey). A key that cannot be derived
// (an empty secret, which the flags refuse) is none: the region's agents
// then cannot gossip.
func regionGossipKeys(secret []byte, log hclog.Logger) func(region string) []byte {
	return func(region string) []byte {
		key, err := cluster.RegionGossipKey(secret, region)
		if err != nil {
			log.Error("derive a region's gossip key", "region", region, "error", err)
			return nil
		}
		return key
	}
}

// presenceAdapter hands the agent RPC's reports to the presence recorder.
type presenceAdapter struct{ r *presence.Recorder }

func (p presenceAdapter) Seen(ctx context.Context, s agentrpc.Seen) error {
	return p.r.Seen(ctx, presence.Seen{
		TokenID: s.TokenID, Region: s.Region, AgentID: s.AgentID, Name: s.Name, Version: s.Version, Node: s.Node,
		Connected: s.Connected, BufferedEvents: s.BufferedEvents, BufferedResults: s.BufferedResults,
		OldestBufferedUnixMs: s.OldestBufferedUnixMs, Members: s.Members,
	})
}
