package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"lookout/internal/bench"
	"lookout/internal/schedule"
)

// sample is how many checks' executions are read through the API (which
// allows 60 requests a minute a key).
const sample = 50

// part is the most monitors one apply changes (state.MaxPutMonitors).
const part = 1000

// runNode measures the checks on a real `lookout control --dev` process.
func runNode(ctx context.Context, binary string, tg *target, n, minutes int, settle time.Duration) error {
	cl, err := bench.StartClusterEnv(ctx, binary, 1, []string{"GODEBUG=gctrace=1"})
	if err != nil {
		return err
	}
	defer cl.Stop()
	accts, err := cl.MakeAccounts(ctx, 1)
	if err != nil {
		return err
	}
	pid, logFile := cl.Pid(0), cl.LogFile(0)
	c := &caller{base: "http://" + cl.URLs[0], key: accts[0].ManagementKey}
	fmt.Printf("lookout check scheduler, part 1: 1 dev node (pid %d), %d http_checks every 1m against %s\n", pid, n, tg.url)
	tg.record(n)

	idleRSS, idleGC := rss(pid), gcBetween(logFile, 0, fileSize(logFile))
	applyStart := time.Now()
	for done := 0; done < n; {
		k := min(done+part, n)
		if err := c.apply(bundle(k, tg.url), k-done); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		done = k
	}
	applied := time.Now()
	fmt.Printf("apply: %d checks in %d applies: %s\n", n, (n+part-1)/part, applied.Sub(applyStart).Round(time.Millisecond))

	if err := sleep(ctx, time.Until(applied.Add(settle))); err != nil {
		return err
	}
	t0 := time.Now().Truncate(time.Second).Add(time.Second)
	if err := sleep(ctx, time.Until(t0)); err != nil {
		return err
	}
	cpu0, self0, log0 := procCPU(pid), bench.SelfCPU(), fileSize(logFile)
	t1 := t0.Add(time.Duration(minutes) * time.Minute)
	for now := time.Now(); now.Before(t1); now = time.Now() {
		if err := sleep(ctx, min(30*time.Second, t1.Sub(now))); err != nil {
			return err
		}
		fmt.Printf("  %s of %s measured; node CPU %.1f s so far\n", time.Since(t0).Round(time.Second), t1.Sub(t0), (procCPU(pid) - cpu0).Seconds())
	}
	cpu1, self1, log1, rss1 := procCPU(pid), bench.SelfCPU(), fileSize(logFile), rss(pid)
	if err := sleep(ctx, 10*time.Second); err != nil { // the last slots' executions start
		return err
	}

	arrivals := tg.take()
	checks, err := c.checkIDs()
	if err != nil {
		return err
	}
	if len(checks) != n {
		return fmt.Errorf("%d checks listed, want %d", len(checks), n)
	}
	sched, _ := schedule.Parse("1m")
	var arrived []time.Duration
	found, dup := 0, 0
	for site, ats := range arrivals {
		seen := map[time.Time]bool{}
		for _, at := range ats {
			// The slot is the check's latest at or before the arrival
			// (the lag is far below the 60 s interval).
			slot := sched.NextFor(checks[site].uuid, at.Add(-time.Minute))
			if slot.Before(t0) || !slot.Before(t1) {
				continue
			}
			if seen[slot] {
				dup++
				continue
			}
			seen[slot] = true
			found++
			arrived = append(arrived, at.Sub(slot))
		}
	}
	expected := n * minutes
	fmt.Printf("window: %s to %s (%d min): %d slots due, %d probed, %d missing (skipped), %d probed twice\n",
		t0.Format("15:04:05"), t1.Format("15:04:05"), minutes, expected, found, expected-found, dup)

	// The API answers 60 requests a minute a key: a sample of the checks'
	// executions gives the attempt start itself.
	var started, commit []time.Duration
	statuses := map[string]int{}
	for i := 0; i < min(sample, n); i++ {
		site := i * n / min(sample, n)
		execs, err := c.executions(checks[site].uuid)
		if err != nil {
			return err
		}
		for _, e := range execs {
			if e.Slot.Before(t0) || !e.Slot.Before(t1) {
				continue
			}
			statuses[e.Status]++
			started = append(started, e.StartedAt.Sub(e.Slot))
			for _, at := range arrivals[site] {
				if sched.NextFor(checks[site].uuid, at.Add(-time.Minute)).Equal(e.Slot) {
					commit = append(commit, at.Sub(e.StartedAt))
				}
			}
		}
	}
	lagHeader()
	lagRow("to the probe's request (all)", arrived)
	lagRow(fmt.Sprintf("to started_at (API, %d checks)", min(sample, n)), started)
	lagRow("started_at to the request", commit)
	fmt.Printf("statuses of the sample in the window: %v\n", statuses)
	if slices.ContainsFunc(arrived, func(d time.Duration) bool { return d > 30*time.Second }) {
		fmt.Println("warning: requests over 30 s late; one over 60 s late counts for the next slot (trust the API sample's started_at)")
	}

	mins := t1.Sub(t0).Minutes()
	nodeCPU, selfCPU := (cpu1 - cpu0).Seconds(), (self1 - self0).Seconds()
	fmt.Printf("node CPU: %.1f s in %.0f min = %.1f s per minute (%.0f%% of one core); %.2f ms per execution\n",
		nodeCPU, mins, nodeCPU/mins, nodeCPU/mins/60*100, nodeCPU*1000/float64(max(1, found)))
	fmt.Printf("bench process CPU (the target server): %.1f s per minute\n", selfCPU/mins)
	reportHeap(idleGC, gcBetween(logFile, log0, log1), n)
	fmt.Printf("node RSS: %.1f MiB before the apply, %.1f MiB at the end of the window\n", idleRSS/(1<<20), rss1/(1<<20))
	return nil
}

// reportHeap prints the node's live heap (after each GC) before the checks
// and during the window.
func reportHeap(idle, window []float64, n int) {
	if len(idle) == 0 || len(window) == 0 {
		fmt.Printf("node live heap: no GC lines (%d before the apply, %d in the window)\n", len(idle), len(window))
		return
	}
	base := idle[len(idle)-1]
	w := slices.Clone(window)
	slices.Sort(w)
	med := w[len(w)/2]
	fmt.Printf("node live heap after GC: %.0f MiB before the apply; in the window (%d GCs) median %.0f MiB, max %.0f MiB; (median - before) / checks = %.1f KiB per check\n",
		base, len(w), med, w[len(w)-1], (med-base)*1024/float64(n))
}

// gcRE matches a gctrace line's heap figures: before->after->live MB.
var gcRE = regexp.MustCompile(`^gc \d+ @.* (\d+)->(\d+)->(\d+) MB`)

// gcBetween is the live heap (MiB, from GODEBUG=gctrace=1) of each GC
// logged between offsets offset and end of file.
func gcBetween(file string, offset, end int64) []float64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	if end < int64(len(b)) {
		b = b[:end]
	}
	b = b[min(int64(len(b)), offset):]
	var out []float64
	for _, line := range strings.Split(string(b), "\n") {
		if m := gcRE.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[3], 64)
			out = append(out, v)
		}
	}
	return out
}

func fileSize(file string) int64 {
	st, err := os.Stat(file)
	if err != nil {
		return 0
	}
	return st.Size()
}

// procCPU is process pid's CPU time (user + system, /proc/<pid>/stat).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 (state) on
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100) // USER_HZ is 100 on Linux
}

// rss is process pid's resident set in bytes.
func rss(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// bundle is the first k of the checks: http_checks every minute of url.
func bundle(k int, url string) []byte {
	ms := make([]map[string]any, k)
	for i := range ms {
		ms[i] = map[string]any{"kind": "http_check", "name": fmt.Sprintf("site-%05d", i), "schedule": "1m",
			"config": map[string]any{"url": fmt.Sprintf("%s?site=%d", url, i), "expected_status": 200}}
	}
	b, _ := json.Marshal(map[string]any{"manifest_version": 1, "monitors": ms})
	return b
}

type caller struct{ base, key string }

func (c *caller) do(method, path string, body []byte, out any) error {
	req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %.300s", method, path, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

// apply posts a bundle that creates want checks.
func (c *caller) apply(b []byte, want int) error {
	var rep struct {
		Summary map[string]int `json:"summary"`
	}
	if err := c.do("POST", "/api/v1/monitors/apply", b, &rep); err != nil {
		return err
	}
	if rep.Summary["create"] != want {
		return fmt.Errorf("report: %v, want %d created", rep.Summary, want)
	}
	return nil
}

// check is a listed check.
type check struct{ uuid, name string }

// checkIDs lists the account's http_checks, in name order (site-00000
// first).
func (c *caller) checkIDs() ([]check, error) {
	var out struct {
		Monitors []struct {
			UUID string `json:"uuid"`
			Name string `json:"name"`
		} `json:"monitors"`
	}
	if err := c.do("GET", "/api/v1/monitors?kind=http_check", nil, &out); err != nil {
		return nil, err
	}
	cs := make([]check, len(out.Monitors))
	for i, m := range out.Monitors {
		cs[i] = check{m.UUID, m.Name}
		if want := fmt.Sprintf("site-%05d", i); m.Name != want {
			return nil, fmt.Errorf("listed %s where %s was expected", m.Name, want)
		}
	}
	return cs, nil
}

// execution is what the benchmark reads of an execution.
type execution struct {
	Slot      time.Time `json:"slot"`
	StartedAt time.Time `json:"started_at"`
	Status    string    `json:"status"`
}

// executions reads the newest executions of check id.
func (c *caller) executions(id string) ([]execution, error) {
	var out struct {
		Executions []execution `json:"executions"`
	}
	err := c.do("GET", "/api/v1/monitors/"+id+"/executions?limit=50", nil, &out)
	return out.Executions, err
}
