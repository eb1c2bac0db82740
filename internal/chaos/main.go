// Command chaos is Lookout's chaos suite (`make chaos`): it starts the
// built binary as three control nodes on loopback, each behind a
// fault-injecting TCP proxy on its raft and node-RPC ports (which the
// nodes advertise, so peers dial the proxies), and for a number of rounds
// kills the leader with SIGKILL and restarts it, cuts the leader off and
// kills it, kills that same node again, cuts the leader off from the
// others, cuts a follower off, and pauses the leader with SIGSTOP, healing
// after each. Meanwhile
// clients record a history of Management API operations on a few
// monitors, checked for linearizability with porcupine, and ping clients
// count their acknowledged pings, each of which must be stored exactly
// once on every node at the end. It prints the rounds, the faults, the
// operation counts and the verdicts, and exits non-zero on a violation.
// See docs/reliability.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"lookout/internal/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	binary        string
	rounds        int
	hold, settle  time.Duration
	manageClients int
	pingClients   int
	monitors      int
	seed          uint64
	dir           string
	keep          bool
	checkTimeout  time.Duration
	logLevel      string
	staleReads    bool
}

func parse(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.StringVar(&o.binary, "lookout", "bin/lookout", "the lookout binary to run")
	fs.IntVar(&o.rounds, "rounds", 4, "rounds of faults (each: kill the leader; cut the leader off and kill it; kill that node again; partition the leader; partition a follower; pause the leader)")
	fs.DurationVar(&o.hold, "hold", 6*time.Second, "how long a killed node stays down, a partition lasts and a paused node stays stopped")
	fs.DurationVar(&o.settle, "settle", 3*time.Second, "quiet time after the cluster is healthy again")
	fs.IntVar(&o.manageClients, "manage-clients", 4, "concurrent Management API clients recording the history")
	fs.IntVar(&o.pingClients, "ping-clients", 3, "concurrent ping clients")
	fs.IntVar(&o.monitors, "monitors", 5, "monitors the history operates on")
	fs.Uint64Var(&o.seed, "seed", 0, "random seed (0: from the clock)")
	fs.StringVar(&o.dir, "dir", "", "where node data, logs and the history visualization go (default: a new temporary directory)")
	fs.BoolVar(&o.keep, "keep", false, "keep -dir after a run without violations (it is always kept after one with)")
	fs.DurationVar(&o.checkTimeout, "check-timeout", 3*time.Minute, "bound on porcupine's search (past it the verdict is unknown)")
	fs.StringVar(&o.logLevel, "log-level", "info", "the nodes' --log-level")
	fs.BoolVar(&o.staleReads, "stale-reads", false, "self-test of the checker: the history's reads ask for ?stale=true, which the contract does not promise to be linearizable, so a run with partitions should report a violation")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.rounds < 0 || o.manageClients < 1 || o.pingClients < 0 || o.monitors < 1 {
		return nil, errors.New("-rounds must be 0 or more, -manage-clients and -monitors at least 1, -ping-clients 0 or more")
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	return o, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	if _, err := os.Stat(o.binary); err != nil {
		return fmt.Errorf("the lookout binary: %w (run make build)", err)
	}
	if o.dir == "" {
		if o.dir, err = os.MkdirTemp("", "lookout-chaos-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(o.seed, 0))
	fmt.Fprintf(out, "chaos: %s, 3 nodes, %d rounds, hold %s, %d management clients on %d monitors, %d ping clients, seed %d\n",
		o.binary, o.rounds, o.hold, o.manageClients, o.monitors, o.pingClients, o.seed)
	fmt.Fprintf(out, "chaos: data and logs in %s\n", o.dir)

	c, err := startCluster(ctx, o.binary, o.dir, o.logLevel, 3)
	if err != nil {
		return err
	}
	defer c.stop()
	w, err := setup(ctx, c, o)
	if err != nil {
		return err
	}

	// The clients, then the faults.
	start := time.Now()
	hist := newHistory(start)
	pings := newPingLog()
	httpc := &http.Client{Timeout: 15 * time.Second}
	mhttpc := httpc
	if o.staleReads {
		mhttpc = &http.Client{Timeout: 15 * time.Second, Transport: staleReads{http.DefaultTransport}}
	}
	wctx, stopClients := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var names []string
	for i := 0; i < o.monitors; i++ {
		names = append(names, fmt.Sprintf("reg-%d", i))
	}
	for i := 0; i < o.manageClients; i++ {
		mc := &manageClient{id: i, proc: i, clients: o.manageClients, keys: w.manageKeys[i], urls: c.urls(), names: names, hist: hist, httpc: mhttpc, rng: rand.New(rand.NewPCG(rng.Uint64(), 1))}
		wg.Add(1)
		go func() { defer wg.Done(); mc.run(wctx) }()
	}
	for i := 0; i < o.pingClients; i++ {
		pc := &pingClient{id: i, key: w.ingestKey, urls: c.urls(), log: pings, httpc: httpc, rng: rand.New(rand.NewPCG(rng.Uint64(), 2)), retryFor: 30 * time.Second}
		wg.Add(1)
		go func() { defer wg.Done(); pc.run(wctx) }()
	}
	sleep(ctx, o.settle)
	f := &faulter{c: c, start: start, rng: rng, hold: o.hold, settle: o.settle, recovery: 90 * time.Second, out: out, acks: pings}
	faultErr := f.rounds(ctx, o.rounds)
	sleep(ctx, o.settle)
	stopClients()
	wg.Wait()
	elapsed := time.Since(start)

	// Heal everything and let the cluster settle before counting.
	c.net.Heal()
	for _, n := range c.nodes {
		n.resume()
		if !n.running() {
			if err := n.start(c.binary); err != nil {
				return err
			}
		}
	}
	_, healthErr := c.waitHealthy(ctx, 90*time.Second)

	r := &report{o: o, faults: f.faults, elapsed: elapsed, faultErr: faultErr, healthErr: healthErr, hist: hist}
	r.checkHistory(ctx)
	r.checkConverged(ctx, c, w)
	r.checkPings(ctx, c, w, pings)
	r.countSuffixes(c)
	for _, n := range c.nodes {
		r.proxies = append(r.proxies, fmt.Sprintf("%s raft %d/%d/%d http %d/%d/%d", n.id,
			n.raftProxy.Carried.Load(), n.raftProxy.Dropped.Load(), n.raftProxy.Unknown.Load(),
			n.httpProxy.Carried.Load(), n.httpProxy.Dropped.Load(), n.httpProxy.Unknown.Load()))
		for _, p := range []*Proxy{n.raftProxy, n.httpProxy} {
			if why, ok := p.lastUnknown.Load().(string); ok {
				r.proxies = append(r.proxies, "last unidentified: "+why)
			}
		}
	}
	failed := r.print(out)
	c.stop()
	if failed {
		return fmt.Errorf("violations found; node logs in %s", o.dir)
	}
	if !o.keep {
		os.RemoveAll(o.dir)
	}
	return nil
}

// workload is what setup made: the keys of the clients.
type workload struct {
	manageKeys [][]string // per management client
	ingestKey  string
	pingMgmt   string // management key of the pings' account
}

// setup makes two accounts through the operator API: one whose monitors
// the history works on (two management keys per client, since the rate
// limit is per key and node), one that receives the pings (no ingest
// limits).
func setup(ctx context.Context, c *cluster, o *options) (*workload, error) {
	admin := client.NewAdmin(c.urls()[0], adminToken, nil)
	w := &workload{}
	var hist *client.CreatedAccount
	if err := retry(ctx, func() (err error) {
		hist, err = admin.CreateAccount(ctx, client.CreateAccountRequest{Email: "chaos-history@example.com"})
		return err
	}); err != nil {
		return nil, fmt.Errorf("create the history account: %w", err)
	}
	for i := 0; i < o.manageClients; i++ {
		var keys []string
		for j := 0; j < 2; j++ {
			var k *client.CreatedKey
			if err := retry(ctx, func() (err error) {
				k, err = admin.CreateKey(ctx, hist.ID, client.CreateKeyRequest{Type: client.KeyTypeManagement, Name: fmt.Sprintf("client-%d-%d", i, j)})
				return err
			}); err != nil {
				return nil, fmt.Errorf("create a management key: %w", err)
			}
			keys = append(keys, k.Key)
		}
		w.manageKeys = append(w.manageKeys, keys)
	}
	rate, burst, creations := 1e6, int64(1e6), int64(100_000)
	var pa *client.CreatedAccount
	if err := retry(ctx, func() (err error) {
		pa, err = admin.CreateAccount(ctx, client.CreateAccountRequest{Email: "chaos-pings@example.com",
			Plan: &client.PlanRequest{IngestRatePerSecond: &rate, IngestBurst: &burst, MonitorsCreatedPerMinute: &creations}})
		return err
	}); err != nil {
		return nil, fmt.Errorf("create the pings account: %w", err)
	}
	w.ingestKey, w.pingMgmt = pa.IngestKey, pa.ManagementKey
	// Every node holds the keys before the clients start (a node that
	// does not would ask the leader, which is fine, but not the point).
	if _, err := c.waitHealthy(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	return w, nil
}

// staleReads adds stale=true to every GET (-stale-reads).
type staleReads struct{ next http.RoundTripper }

func (s staleReads) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		req = req.Clone(req.Context())
		q := req.URL.Query()
		q.Set("stale", "true")
		req.URL.RawQuery = q.Encode()
	}
	return s.next.RoundTrip(req)
}
