package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// driver drives targets in a closed loop, measuring the CPU used over the
// measured window in cpu (nil: not).
type driver interface {
	runMeasured(ctx context.Context, warmup, d time.Duration, cpu *cpuWindow) (result, error)
}

// wrkLoad drives the same pings with wrk (Debian's package), a load
// generator in C that costs the machine far less per request than Go's
// HTTP client: one wrk process per target address, the connections split
// between them.
type wrkLoad struct {
	bin      string
	conns    int
	urls     []string
	keys     []string
	monitors int
}

// wrkScript makes each request a ping as pingRequest does, cycling
// through the keys and monitors, and prints the figures on one line.
const wrkScript = `local keys = {%s}
local monitors = %d
local n = 0
local next_id = 0
function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
end
function init(args)
  n = (tonumber(id) or 0) * 7919
end
function request()
  n = n + 1
  local body = '{"event_type":"ping","monitor":"job-' .. (n %% monitors) .. '","status":"complete","duration":1.25,"exit_code":0,"host":"bench-host","message":"backup done"}'
  return wrk.format("POST", "/ping", {["Authorization"] = "Bearer " .. keys[n %% #keys + 1], ["Content-Type"] = "application/json"}, body)
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("FIGURES %%d %%d %%d %%d %%d %%d\n", summary.requests, summary.duration,
    e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9)))
end
`

func (w *wrkLoad) runMeasured(ctx context.Context, warmup, d time.Duration, cpu *cpuWindow) (result, error) {
	dir, err := os.MkdirTemp("", "benchingest-wrk")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	quoted := make([]string, len(w.keys))
	for i, k := range w.keys {
		quoted[i] = strconv.Quote(k)
	}
	script := filepath.Join(dir, "ping.lua")
	if err := os.WriteFile(script, fmt.Appendf(nil, wrkScript, strings.Join(quoted, ", "), w.monitors), 0o644); err != nil {
		return result{}, err
	}
	if _, err := w.runAll(ctx, script, warmup); err != nil {
		return result{}, fmt.Errorf("wrk warm-up: %w", err)
	}
	cpu.begin(ctx)
	runs, err := w.runAll(ctx, script, d)
	if err != nil {
		return result{}, err
	}
	cpu.end(ctx)
	if cpu != nil {
		cpu.self = 0 // the load generator is wrk: its processes' CPU, below
	}
	// Several processes: the requests add up, the latencies are the worst
	// process's (percentiles do not add up).
	var r result
	for _, run := range runs {
		r.n += run.n
		r.errors += run.errors
		r.elapsed = max(r.elapsed, run.elapsed)
		r.p50, r.p99, r.p999 = max(r.p50, run.p50), max(r.p99, run.p99), max(r.p999, run.p999)
		if cpu != nil {
			cpu.self += run.cpu
		}
	}
	return r, nil
}

// wrkRun is one wrk process's figures and the CPU it used.
type wrkRun struct {
	result
	cpu time.Duration
}

// runAll runs one wrk per target address at once, for d.
func (w *wrkLoad) runAll(ctx context.Context, script string, d time.Duration) ([]wrkRun, error) {
	type out struct {
		run wrkRun
		err error
	}
	done := make(chan out, len(w.urls))
	for i, u := range w.urls {
		conns := w.conns / len(w.urls)
		if i < w.conns%len(w.urls) {
			conns++
		}
		threads := max(1, min(conns, 2/len(w.urls)))
		go func() {
			r, err := w.run(ctx, script, u, conns, threads, d)
			done <- out{r, err}
		}()
	}
	var runs []wrkRun
	var firstErr error
	for range w.urls {
		o := <-done
		if o.err != nil && firstErr == nil {
			firstErr = o.err
		}
		runs = append(runs, o.run)
	}
	return runs, firstErr
}

// run runs one wrk process against addr and reads the line the script's
// done() prints.
func (w *wrkLoad) run(ctx context.Context, script, addr string, conns, threads int, d time.Duration) (wrkRun, error) {
	secs := max(1, int(d.Round(time.Second).Seconds())) // wrk takes whole seconds
	cmd := exec.CommandContext(ctx, w.bin, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns),
		"-d", fmt.Sprintf("%ds", secs), "--timeout", "30s", "-s", script, "http://"+addr)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return wrkRun{}, fmt.Errorf("wrk: %w: %s", err, stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 7 || f[0] != "FIGURES" {
			continue
		}
		var v [6]int64
		for i := range v {
			n, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil {
				return wrkRun{}, fmt.Errorf("wrk: %q: %w", sc.Text(), err)
			}
			v[i] = n
		}
		us := func(n int64) time.Duration { return time.Duration(n) * time.Microsecond }
		return wrkRun{
			result: result{n: int(v[0]), elapsed: us(v[1]), errors: v[2], p50: us(v[3]), p99: us(v[4]), p999: us(v[5])},
			cpu:    cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		}, nil
	}
	return wrkRun{}, fmt.Errorf("wrk printed no figures: %s", stdout.String())
}
