// Command benchagent measures the edge agent's data path. Part 1, in
// this process:
//
//   - append: events appended to agent/buffer (fsynced, as the local
//     Ingest API does before it answers) by one appender, then by 64
//     concurrent ones (Badger groups their commits into shared fsyncs);
//   - ingest: POST /ping to agent/ingest over loopback with 64
//     connections, each answer after the fsynced append;
//   - drain: 1,000,000 events buffered (64 appenders), the buffer closed
//     and opened again (it counts what it holds), then read in batches of
//     1,000 and acknowledged until empty, as the forwarder does;
//
// with the process's resident memory (VmRSS, VmHWM) after each part.
// Part 2, end to end (reconnect.go, with -lookout):
//
//   - reconnect: 1,000,000 pings buffered in an agent's data dir while no
//     agent runs, then `lookout agent` started against a dev control node
//     (`lookout control --dev`): the time until its buffer is empty, its
//     peak RSS and the control node's, and the account's stored count.
//
// Run it with:
//
//	go run ./internal/bench/agent -events 1000000 -lookout bin/lookout
//
// A benchmark, not a test: it prints figures and asserts nothing.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

func main() {
	var (
		events   = flag.Int("events", 1_000_000, "events buffered, then drained")
		writers  = flag.Int("writers", 64, "concurrent appenders (and HTTP connections)")
		seqFor   = flag.Duration("seq-duration", 5*time.Second, "measured time of the sequential append")
		parFor   = flag.Duration("par-duration", 10*time.Second, "measured time of the concurrent append and of the HTTP ingest")
		batch    = flag.Int("batch", 1000, "events per drained batch")
		dir      = flag.String("dir", "", "directory of the buffers (default: a temporary one, removed)")
		small    = flag.Bool("small", false, "Badger's small options")
		maxBytes = flag.Int64("max-bytes", 1<<30, "the buffer's bound (--buffer-max-bytes)")
		parts    = flag.String("parts", "append,ingest,drain,reconnect", "the parts to run")
		cpuprof  = flag.String("cpuprofile", "", "write a CPU profile to this file")
		lookout  = flag.String("lookout", "", "the lookout binary, for the reconnect part (empty: skipped)")
		ctlProf  = flag.String("control-profile", "", "write a 20 s CPU profile of the control node during the drain to this file")
	)
	flag.Parse()
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchagent:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	c := config{events: *events, writers: *writers, seqFor: *seqFor, parFor: *parFor, batch: *batch,
		dir: *dir, small: *small, maxBytes: *maxBytes, parts: *parts,
		lookout: *lookout, controlProfile: *ctlProf}
	if err := run(c); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "benchagent:", err)
		os.Exit(1)
	}
}

type config struct {
	events, writers, batch int
	seqFor, parFor         time.Duration
	dir                    string
	small                  bool
	maxBytes               int64
	parts                  string
	lookout                string
	controlProfile         string
}

func run(c config) error {
	root := c.dir
	if root == "" {
		d, err := os.MkdirTemp("", "lookout-bench-agent-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		root = d
	}
	fmt.Printf("lookout agent data path, part 1 (in one process); Badger options: %s, bound %d MiB\n",
		map[bool]string{true: "small", false: "default"}[c.small], c.maxBytes>>20)
	for _, p := range []struct {
		name string
		fn   func(config, string) error
	}{{"append", benchAppend}, {"ingest", benchIngest}, {"drain", benchDrain}, {"reconnect", benchReconnect}} {
		if !slices.Contains(strings.Split(c.parts, ","), p.name) {
			continue
		}
		if err := p.fn(c, root); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return nil
}
