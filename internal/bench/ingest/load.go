package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"lookout/internal/bench"
)

// load is a closed-loop load generator: conns goroutines, each with its own
// keep-alive connection, send requests back to back.
type load struct {
	conns int
	urls  []string
	make  func(conn, n int) *http.Request
}

func newLoad(conns int, urls []string, mk func(conn, n int) *http.Request) *load {
	return &load{conns: conns, urls: urls, make: mk}
}

// result is one measured run: requests answered, errors, and the latency
// percentiles (0: not measured).
type result struct {
	n              int
	errors         int64
	elapsed        time.Duration
	p50, p99, p999 time.Duration
}

func (r result) rate() float64 { return float64(r.n) / r.elapsed.Seconds() }

// percentile is the p-th of sorted latencies.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

func header() string {
	return fmt.Sprintf("%-28s %10s %9s %9s %9s %7s", "target", "req/s", "p50", "p99", "p99.9", "errors")
}

func (r result) row(name string) string {
	ms := func(d time.Duration) string {
		if d == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%-28s %10.0f %9s %9s %9s %7d", name, r.rate(), ms(r.p50), ms(r.p99), ms(r.p999), r.errors)
}

// cpuWindow measures the CPU time of pids over a run's measured window.
// It also reads the nodes' batch figures (urls) over the same window.
type cpuWindow struct {
	pids []int
	used time.Duration
	err  error
	self time.Duration // the load generator's CPU over the window

	urls    []string
	batches batchFigures
	berr    error

	cpu0, self0 time.Duration
	b0          batchFigures
}

// begin reads the counters at the window's start (a nil window: none).
func (w *cpuWindow) begin(ctx context.Context) {
	if w == nil {
		return
	}
	w.self0 = bench.SelfCPU()
	w.cpu0, w.err = cpuTime(w.pids)
	w.b0, w.berr = scrapeBatches(ctx, w.urls)
}

// end reads them at its end and keeps the differences. self is this
// process's CPU: a load generator in another process sets its own.
func (w *cpuWindow) end(ctx context.Context) {
	if w == nil {
		return
	}
	w.self = bench.SelfCPU() - w.self0
	if w.err == nil {
		var cpu1 time.Duration
		cpu1, w.err = cpuTime(w.pids)
		w.used = cpu1 - w.cpu0
	}
	if w.berr == nil {
		var b1 batchFigures
		b1, w.berr = scrapeBatches(ctx, w.urls)
		w.batches = b1.since(w.b0)
	}
}

// runMeasured drives the target for warmup, then measures for d, and the
// CPU used over that window in cpu (nil: not).
func (l *load) runMeasured(ctx context.Context, warmup, d time.Duration, cpu *cpuWindow) (result, error) {
	var measuring atomic.Bool
	var errs atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	lats := make([][]time.Duration, l.conns)
	var wg sync.WaitGroup
	for i := 0; i < l.conns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
			base := l.urls[i%len(l.urls)]
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				req := l.make(i, n)
				req.URL.Scheme, req.URL.Host = "http", base
				start := time.Now()
				resp, err := client.Do(req.WithContext(ctx))
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				took := time.Since(start)
				if !measuring.Load() {
					continue
				}
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				lats[i] = append(lats[i], took)
			}
		}(i)
	}
	sleep(ctx, warmup)
	cpu.begin(ctx)
	measuring.Store(true)
	start := time.Now()
	sleep(ctx, d)
	measuring.Store(false)
	elapsed := time.Since(start)
	cpu.end(ctx)
	close(stop)
	wg.Wait()
	if ctx.Err() != nil {
		return result{}, ctx.Err()
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	r := result{n: len(all), errors: errs.Load(), elapsed: elapsed,
		p50: percentile(all, 0.50), p99: percentile(all, 0.99), p999: percentile(all, 0.999)}
	if r.errors > 0 {
		fmt.Printf("  %d errors, the first: %v\n", r.errors, firstErr.Load())
	}
	return r, nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// pingRequest is one run/complete ping as a job would send it.
func pingRequest(key, monitor string) *http.Request {
	body := fmt.Sprintf(`{"event_type":"ping","monitor":%q,"status":"complete","duration":1.25,"exit_code":0,"host":"bench-host","message":"backup done"}`, monitor)
	req, _ := http.NewRequest(http.MethodPost, "http://placeholder/ping", bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	return req
}
