// Command burst measures the top of the minute: many cron jobs that all
// start at the same second, each sending `run` then `complete` to the
// Ingest API, every ping retried as `lookout ping` does until it is
// acknowledged. It reports how long the jobs waited for their
// acknowledgements, and reads every monitor's events back through the
// Management API to count what was lost or stored twice.
//
//	go run ./internal/bench/burst -lookout bin/lookout -nodes 3 -monitors 20000
//
// It is what `make bench-burst` runs. A benchmark, not a test: it prints
// figures and asserts nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"lookout/internal/bench"
	"lookout/internal/client"
)

// config is the command line.
type config struct {
	binary                   string
	nodes, monitors          int
	accounts, conns          int
	giveUp                   time.Duration
	startAt                  string
	cpuprofile               string
	readParallel, setupParal int
}

func main() {
	var c config
	flag.StringVar(&c.binary, "lookout", "bin/lookout", "the lookout binary")
	flag.IntVar(&c.nodes, "nodes", 1, "control nodes: 1 (a dev node) or 3 (a cluster; the jobs' requests are spread over the nodes, as a load balancer would)")
	flag.IntVar(&c.monitors, "monitors", 20_000, "cron jobs (ping monitors), each sending run then complete at the same second")
	flag.IntVar(&c.accounts, "accounts", 100, "accounts the monitors are spread over")
	flag.IntVar(&c.conns, "conns", 1000, "connections the jobs share, over all nodes (each job waits for one, as a job would wait for the server to accept it)")
	flag.DurationVar(&c.giveUp, "give-up", time.Minute, "how long each ping is retried (lookout ping's --retry-for)")
	flag.StringVar(&c.startAt, "start", "minute", "when the jobs start: minute (the next whole minute) or now (two seconds after the setup)")
	flag.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of node 1 over the burst's first 10 s to this file")
	flag.Parse()
	c.readParallel, c.setupParal = 8, 4
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "bench burst:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	if c.nodes != 1 && c.nodes != 3 {
		return fmt.Errorf("-nodes must be 1 or 3")
	}
	if c.accounts < 1 || c.monitors < c.accounts {
		return fmt.Errorf("-accounts must be 1 to -monitors")
	}
	if c.startAt != "minute" && c.startAt != "now" {
		return fmt.Errorf("-start must be minute or now")
	}
	fmt.Printf("machine: %s\n", bench.Machine())
	fmt.Printf("lookout: %d node(s); %d jobs in %d accounts send run then complete at one instant over %d connections\n",
		c.nodes, c.monitors, c.accounts, c.conns)
	cl, err := bench.StartCluster(ctx, c.binary, c.nodes)
	if err != nil {
		return err
	}
	defer cl.Stop()
	// The jobs' connections, spread over the nodes; the readers' own.
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxConnsPerHost: max(1, c.conns/c.nodes), MaxIdleConnsPerHost: max(1, c.conns/c.nodes), IdleConnTimeout: 5 * time.Minute}}
	accts, err := setUp(ctx, cl, c)
	if err != nil {
		return err
	}
	start := time.Now().Add(2 * time.Second).Truncate(time.Second)
	if c.startAt == "minute" {
		start = time.Now().Add(2 * time.Second).Truncate(time.Minute).Add(time.Minute)
	}
	fmt.Printf("the jobs start at %s\n", start.Format("15:04:05"))
	if c.cpuprofile != "" {
		go func() {
			bench.Sleep(ctx, time.Until(start))
			if err := cl.CPUProfile(ctx, 0, 10*time.Second, c.cpuprofile); err != nil {
				fmt.Fprintln(os.Stderr, "cpu profile:", err)
			}
		}()
	}
	// Job j's requests go to node j mod nodes, as a load balancer would
	// spread them.
	jobs := fire(ctx, start, accts, c.giveUp, func(a *account, j int) *client.Ingest {
		return client.NewIngest("http://"+cl.URLs[j%c.nodes], a.IngestKey, hc)
	})
	res := summarise(jobs)
	res.print()
	counts, err := readBack(ctx, cl, accts, jobs, c.readParallel)
	if err != nil {
		return err
	}
	fmt.Printf("read back through the Management API: %d events stored of %d acknowledged; %d lost, %d stored twice or more, %d not acknowledged but stored\n",
		counts.stored, res.acked, counts.lost, counts.duplicated, counts.unackedStored)
	for _, e := range counts.examples {
		fmt.Println("  ", e)
	}
	return nil
}
