package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"lookout/internal/client"
)

// report is the outcome of a run.
type report struct {
	o                   *options
	faults              []fault
	elapsed             time.Duration
	faultErr, healthErr error
	hist                *history
	ops                 int
	unknown             int
	verdict             porcupine.CheckResult
	checkTook           time.Duration
	converged           error    // the nodes' own copies of the monitors differ
	illegal             []string // monitors whose history is not linearizable
	vizPath             string
	vizErr              error
	pings               []*pingCount
	pingErr             error
	acked, sent         int
	pingErrs            map[string]int
	proxies             []string
	suffixes            map[string]int // "clearing log suffix" lines in each node's log
}

// countSuffixes counts, in each node's log, raft's note that it cleared a
// conflicting tail of its log: the path kill-cut-leader is there to reach.
func (r *report) countSuffixes(c *cluster) {
	r.suffixes = map[string]int{}
	for _, n := range c.nodes {
		b, err := os.ReadFile(n.logPath)
		if err == nil {
			r.suffixes[n.id] = strings.Count(string(b), "clearing log suffix")
		}
	}
}

// checkHistory runs porcupine on the history; on anything but Ok it
// writes the visualization, with the faults as annotations.
func (r *report) checkHistory(ctx context.Context) {
	ops := r.hist.operations()
	r.ops = len(ops)
	for _, op := range ops {
		if op.Output.(mOutput).Unknown {
			r.unknown++
		}
	}
	model := monitorModel()
	began := time.Now()
	res, info := porcupine.CheckOperationsVerbose(model, ops, r.o.checkTimeout)
	r.verdict, r.checkTook = res, time.Since(began)
	if res == porcupine.Ok {
		return
	}
	if res == porcupine.Illegal { // name the monitors whose history is not linearizable
		byName := map[string][]porcupine.Operation{}
		for _, op := range ops {
			byName[op.Input.(mInput).Name] = append(byName[op.Input.(mInput).Name], op)
		}
		for name, part := range byName {
			if porcupine.CheckOperationsTimeout(model, part, r.o.checkTimeout) == porcupine.Illegal {
				r.illegal = append(r.illegal, name)
			}
		}
		sort.Strings(r.illegal)
	}
	var notes []porcupine.Annotation
	for _, f := range r.faults {
		notes = append(notes, porcupine.Annotation{Tag: "faults", Start: int64(f.Start), End: int64(f.End),
			Description: f.Kind + " " + f.Node, Details: f.String()})
	}
	info.AddAnnotations(notes)
	r.vizPath = filepath.Join(r.o.dir, "history.html")
	r.vizErr = porcupine.VisualizePath(model, info, r.vizPath)
}

// checkConverged compares what each node holds locally (?stale=true) of
// the history's monitors with a consistent read, once nothing writes:
// within a bound, every replica must hold the same.
func (r *report) checkConverged(ctx context.Context, c *cluster, w *workload) {
	key := w.manageKeys[0][0]
	snapshot := func(url string, stale bool) (string, error) {
		httpc := &http.Client{Timeout: 15 * time.Second}
		if stale {
			httpc.Transport = staleReads{http.DefaultTransport}
		}
		var page *client.MonitorPage
		err := retry(ctx, func() (err error) {
			page, err = client.NewManage(url, key, httpc).ListMonitors(ctx, client.ListOptions{})
			return err
		})
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, m := range page.Monitors {
			fmt.Fprintf(&b, "%s=%s/%q ", m.Name, short(m.UUID), m.DisplayName)
		}
		return b.String(), nil
	}
	want, err := snapshot(c.urls()[0], false)
	if err != nil {
		r.converged = err
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, url := range c.urls() {
		for {
			got, err := snapshot(url, true)
			if err == nil && got == want {
				break
			}
			if time.Now().After(deadline) {
				r.converged = fmt.Errorf("%s holds %q (%v), the cluster %q", url, got, err, want)
				return
			}
			sleep(ctx, 200*time.Millisecond)
		}
	}
}

// checkPings counts the pings through every node.
func (r *report) checkPings(ctx context.Context, c *cluster, w *workload, log *pingLog) {
	log.mu.Lock()
	r.sent, r.acked, r.pingErrs = len(log.monitor), len(log.acked), log.errs
	log.mu.Unlock()
	if r.o.pingClients == 0 {
		return
	}
	httpc := &http.Client{Timeout: 30 * time.Second}
	for _, url := range c.urls() {
		pc, err := countPings(ctx, url, w.pingMgmt, log, httpc)
		if err != nil {
			r.pingErr = fmt.Errorf("%s: %w", url, err)
			return
		}
		r.pings = append(r.pings, pc)
	}
}

// print writes the report and tells whether anything was violated.
func (r *report) print(out io.Writer) (failed bool) {
	fmt.Fprintf(out, "\n== chaos report (seed %d) ==\n", r.o.seed)
	fmt.Fprintf(out, "clients ran %.0fs; %d faults injected:\n", r.elapsed.Seconds(), len(r.faults))
	var failovers []time.Duration
	for _, f := range r.faults {
		fmt.Fprintf(out, "  %s\n", f)
		if f.Failover > 0 {
			failovers = append(failovers, f.Failover)
		}
	}
	if len(failovers) > 0 {
		slices.Sort(failovers)
		fmt.Fprintf(out, "failover (a leader SIGKILLed to the first acknowledgement of a ping sent after it): median %.2fs, max %.2fs over %d kills\n",
			median(failovers).Seconds(), failovers[len(failovers)-1].Seconds(), len(failovers))
	}
	if r.faultErr != nil {
		fmt.Fprintf(out, "VIOLATION: the faults stopped early: %v\n", r.faultErr)
		failed = true
	}
	if r.healthErr != nil {
		fmt.Fprintf(out, "VIOLATION: the cluster is not healthy after the heal: %v\n", r.healthErr)
		failed = true
	}
	fmt.Fprintf(out, "proxies (carried/dropped/unidentified connections): %v\n", r.proxies)
	fmt.Fprintf(out, "log tails cleared by raft on a returning node (\"clearing log suffix\"): %v\n", r.suffixes)
	fmt.Fprintf(out, "management operations: %d in the history (%d with unknown outcome)\n", r.ops, r.unknown)
	fmt.Fprintf(out, "  by outcome: %v\n", r.hist.summary())
	switch r.verdict {
	case porcupine.Ok:
		fmt.Fprintf(out, "linearizability (porcupine): OK (checked in %.1fs)\n", r.checkTook.Seconds())
	case porcupine.Illegal:
		fmt.Fprintf(out, "VIOLATION: linearizability (porcupine): ILLEGAL on monitors %v; visualization %s (%v)\n", r.illegal, r.vizPath, r.vizErr)
		failed = true
	default:
		fmt.Fprintf(out, "VIOLATION: linearizability (porcupine): UNKNOWN (no verdict within %s); visualization %s (%v)\n", r.o.checkTimeout, r.vizPath, r.vizErr)
		failed = true
	}
	if r.converged != nil {
		fmt.Fprintf(out, "VIOLATION: the nodes' copies of the monitors differ after the heal: %v\n", r.converged)
		failed = true
	} else {
		fmt.Fprintln(out, "replicas: every node's own copy of the monitors (?stale=true) is the same after the heal")
	}
	fmt.Fprintf(out, "pings: %d sent, %d acknowledged; attempts not acknowledged: %v\n", r.sent, r.acked, r.pingErrs)
	if r.pingErr != nil {
		fmt.Fprintf(out, "VIOLATION: could not count the stored pings: %v\n", r.pingErr)
		failed = true
	}
	for _, p := range r.pings {
		fmt.Fprintf(out, "  %s: %d stored, acknowledged and lost %d, stored twice %d, unsent %d, stored though not acknowledged %d\n",
			p.node, p.stored, p.lost, p.duplicated, p.foreign, p.unackedButStored)
		if p.lost+p.duplicated+p.foreign > 0 {
			fmt.Fprintf(out, "VIOLATION: pings through %s: %v\n", p.node, p.examples)
			failed = true
		}
	}
	if failed {
		fmt.Fprintln(out, "RESULT: FAIL")
	} else {
		fmt.Fprintln(out, "RESULT: PASS")
	}
	return failed
}

// median of sorted durations (the mean of the middle two for an even
// count).
func median(d []time.Duration) time.Duration {
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}
