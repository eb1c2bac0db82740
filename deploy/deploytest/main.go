// Command deploytest proves that deploy/docker-compose.yml works, on the
// images `make image image-target` built: it brings up 3 control nodes,
// 2 edge agents in two regions and a target, pings through the control
// nodes and the agents, kills the leader with `docker kill` while clients
// keep pinging, cuts one region off the control plane with
// `docker network disconnect` and pings its agent, reconnects it, and then
// counts: every acknowledged ping must be stored exactly once. Then it
// scrapes /metrics of every node and saves a snapshot (checked whole). It
// always tears the project down (`docker-compose down -v`).
//
// `make deploy-test` runs it. The agent steps run when the image has
// `lookout agent` (-agents auto); -agents on makes a missing agent a
// failure, -agents off skips them.
package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type config struct {
	image, targetImage string
	agents             string // auto, on, off
	project, file      string
	tls                bool
	timeout            time.Duration
	verbose, keep      bool
}

func main() {
	var cfg config
	flag.StringVar(&cfg.image, "image", "lookout:latest", "the lookout image (make image)")
	flag.StringVar(&cfg.targetImage, "target-image", "lookout-target:latest", "the target image (make image-target)")
	flag.StringVar(&cfg.agents, "agents", "auto", "agent steps: auto (run them when the image has `lookout agent`), on (required), off")
	flag.StringVar(&cfg.project, "project", "lookout-deploytest", "docker-compose project name (prefixes containers, networks and volumes)")
	flag.StringVar(&cfg.file, "file", "deploy/docker-compose.yml", "the compose file")
	flag.BoolVar(&cfg.tls, "tls", false, "add docker-compose.tls.yml (HTTPS, mutual TLS between nodes) with certificates made by deploy/certs")
	flag.DurationVar(&cfg.timeout, "timeout", 9*time.Minute, "give up after this long (teardown still runs)")
	flag.BoolVar(&cfg.verbose, "v", false, "print every docker command and its output")
	flag.BoolVar(&cfg.keep, "keep", false, "leave the project running at the end (debugging; tear down with docker-compose -p PROJECT down -v)")
	flag.Parse()
	switch cfg.agents {
	case "auto", "on", "off":
	default:
		fmt.Fprintln(os.Stderr, "deploytest: -agents must be auto, on or off")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := newRun(cfg)
	start := time.Now()
	err := r.main(ctx)
	for _, f := range r.cleanup {
		f()
	}
	r.summary(time.Since(start), err)
	if err != nil {
		os.Exit(1)
	}
}

// step is one line of the summary.
type step struct {
	name string
	took time.Duration
	note string
	err  error
}

// run is one run of the test.
type run struct {
	cfg   config
	c     *compose
	token string // the admin token
	l     *ledger
	steps []step
	// agents tells whether the agent steps run, skipped why they do not.
	agents  bool
	skipped string
	// facts for the summary.
	facts []string
	// tlsConf trusts the deployment's CA (with -tls).
	tlsConf *tls.Config
	cleanup []func()
}

func (r *run) scheme() string {
	if r.cfg.tls {
		return "https"
	}
	return "http"
}

func newRun(cfg config) *run {
	token, runID := randomHex(24), randomHex(4)
	return &run{
		cfg:   cfg,
		token: token,
		l:     &ledger{run: "dt" + runID},
		c: &compose{
			project: cfg.project, files: []string{cfg.file}, verbose: cfg.verbose,
			env: []string{
				"LOOKOUT_IMAGE=" + cfg.image, "LOOKOUT_TARGET_IMAGE=" + cfg.targetImage,
				"LOOKOUT_ADMIN_TOKEN=" + token, "LOOKOUT_LOG_LEVEL=info",
				// Empty host ports: Docker picks free ones, so the test
				// never collides with what else runs on the machine.
				"LOOKOUT_N1_PORT=", "LOOKOUT_N2_PORT=", "LOOKOUT_N3_PORT=",
				"LOOKOUT_AGENT_EU_PORT=", "LOOKOUT_AGENT_US_PORT=",
				"LOOKOUT_AGENT_TOKEN_EU=", "LOOKOUT_AGENT_TOKEN_US=",
			},
		},
	}
}

// do runs one step, timed, and records it for the summary.
func (r *run) do(name string, f func() (string, error)) error {
	fmt.Printf("==> %s\n", name)
	start := time.Now()
	note, err := f()
	s := step{name: name, took: time.Since(start), note: note, err: err}
	r.steps = append(r.steps, s)
	if err != nil {
		fmt.Printf("    FAILED after %s: %v\n", s.took.Round(100*time.Millisecond), err)
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Printf("    ok (%s) %s\n", s.took.Round(100*time.Millisecond), note)
	return nil
}

func (r *run) main(ctx context.Context) (err error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.timeout)
	defer cancel()
	if err := r.do("preflight", func() (string, error) { return r.preflight(ctx) }); err != nil {
		return err
	}
	// Leftovers of an interrupted run of the same project go first.
	_, _ = r.c.run(ctx, "down", "-v", "--remove-orphans", "-t", "1")
	defer func() {
		if err != nil {
			fmt.Println("==> logs of the failed run (last 40 lines of each service)")
			fmt.Print(indent(r.c.logs(context.Background(), 40)))
		}
		if r.cfg.keep {
			fmt.Printf("==> left running: docker-compose -p %s -f %s --profile agents down -v\n", r.cfg.project, strings.Join(r.c.files, " -f "))
			return
		}
		tctx, tcancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer tcancel()
		if derr := r.do("tear down", func() (string, error) {
			_, err := r.c.run(tctx, "down", "-v", "--remove-orphans", "-t", "2")
			return "docker-compose down -v", err
		}); derr != nil && err == nil {
			err = derr
		}
	}()

	w := &world{r: r}
	steps := []struct {
		name   string
		agents bool // an agent step
		f      func(context.Context) (string, error)
	}{
		{"compose up (3 control nodes, target)", false, w.up},
		{"a leader is elected", false, w.waitLeader},
		{"account and agent tokens", false, w.setup},
		{"ping through the control nodes", false, w.pingControl},
		{"agents up, ping through each", true, w.agentsUp},
		{"docker kill the leader, keep pinging", false, w.killLeader},
		{"restart the killed node", false, w.restartKilled},
		{"cut region eu off, ping its agent", true, w.cutRegion},
		{"reconnect region eu", true, w.reconnect},
		{"count: every acknowledged ping stored once", false, w.count},
		{"agents ran the regional check", true, w.checkExecutions},
		{"scrape /metrics of every node", false, w.scrape},
		{"back up: snapshot save, checked", false, w.backup},
	}
	for _, s := range steps {
		if s.agents && !r.agents {
			continue
		}
		f := s.f
		if err := r.do(s.name, func() (string, error) { return f(ctx) }); err != nil {
			return err
		}
	}
	return nil
}

// preflight checks the tools and images and decides about the agent
// steps.
func (r *run) preflight(ctx context.Context) (string, error) {
	v, err := r.c.exec(ctx, "docker-compose", "version", "--short")
	if err != nil {
		return "", fmt.Errorf("docker-compose is needed (Debian: apt-get install docker-compose): %w", err)
	}
	for _, img := range []string{r.cfg.image, r.cfg.targetImage} {
		if _, err := r.c.docker(ctx, "image", "inspect", img); err != nil {
			return "", fmt.Errorf("image %s not found (make image image-target builds it; nothing is pulled)", img)
		}
	}
	if r.cfg.agents == "off" {
		r.skipped = "-agents off"
	} else {
		// `lookout agent --help` prints its flags (exit 2); an unknown
		// command says so.
		out, _ := r.c.docker(ctx, "run", "--rm", "--network", "none", r.cfg.image, "agent", "--help")
		if strings.Contains(out, `unknown command "agent"`) {
			r.skipped = "lookout agent not built"
		} else if !strings.Contains(out, "--region") && !strings.Contains(out, "-region") {
			return "", fmt.Errorf("`lookout agent --help` in %s did not list --region:\n%s", r.cfg.image, indent(out))
		}
	}
	if r.skipped != "" && r.cfg.agents == "on" {
		return "", fmt.Errorf("-agents on, but %s", r.skipped)
	}
	r.agents = r.skipped == ""
	if r.cfg.tls {
		if err := r.makeCerts(ctx); err != nil {
			return "", err
		}
	}
	note := "docker-compose " + strings.TrimSpace(v) + ", agent steps: "
	if r.cfg.tls {
		note = "TLS, " + note
	}
	if r.agents {
		note += "on"
	} else {
		note += "skipped (" + r.skipped + ")"
		fmt.Printf("    agent steps skipped: %s\n", r.skipped)
	}
	return note, nil
}

// makeCerts makes a CA and the certificates of the nodes and agents with
// deploy/certs, in a temporary directory docker-compose.tls.yml mounts,
// and trusts the CA.
func (r *run) makeCerts(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "lookout-deploytest-tls-")
	if err != nil {
		return err
	}
	r.cleanup = append(r.cleanup, func() { os.RemoveAll(dir) })
	if _, err := r.c.exec(ctx, "go", "run", "./deploy/certs", "-dir", dir, "-force"); err != nil {
		return err
	}
	pem, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("%s/ca.crt holds no certificate", dir)
	}
	r.tlsConf = &tls.Config{RootCAs: pool, ServerName: "lookout"}
	r.c.files = append(r.c.files, filepath.Join(filepath.Dir(r.cfg.file), "docker-compose.tls.yml"))
	r.c.env = append(r.c.env, "LOOKOUT_TLS_DIR="+dir)
	return nil
}

func (r *run) summary(took time.Duration, err error) {
	verdict := "PASS"
	if err != nil {
		verdict = "FAIL"
	}
	mode := "cleartext"
	if r.cfg.tls {
		mode = "TLS"
	}
	fmt.Printf("\ndeploy test: %s in %s (project %s, image %s, %s)\n", verdict, took.Round(100*time.Millisecond), r.cfg.project, r.cfg.image, mode)
	for _, s := range r.steps {
		mark := "ok  "
		if s.err != nil {
			mark = "FAIL"
		}
		fmt.Printf("  %s %-46s %7s  %s\n", mark, s.name, s.took.Round(100*time.Millisecond), s.note)
	}
	for _, f := range r.facts {
		fmt.Printf("  %s\n", f)
	}
	if !r.agents {
		fmt.Printf("  agent steps skipped: %s\n", r.skipped)
	}
	if err != nil {
		fmt.Printf("  error: %v\n", err)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// waitFor polls f every interval until it returns nil, for at most
// within; f's last error explains a timeout.
func waitFor(ctx context.Context, within, every time.Duration, what string, f func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s: %w", what, within, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last: %v)", what, ctx.Err(), err)
		case <-time.After(every):
		}
	}
}
