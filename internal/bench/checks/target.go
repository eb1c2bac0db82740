package main

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// target is the checks' HTTP server: it answers 200 "ok" (after a delay,
// to stand for a real site's latency) and records when
// the request of each check (?site=i) arrived.
type target struct {
	url   string
	srv   *http.Server
	delay time.Duration // before each answer

	mu       sync.Mutex
	arrivals [][]time.Time // by site; nil: not recording
}

// startTarget serves on loopback, answering after delay.
func startTarget(delay time.Duration) (*target, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &target{url: "http://" + ln.Addr().String() + "/health", delay: delay}
	t.srv = &http.Server{Handler: t, ReadHeaderTimeout: 10 * time.Second}
	go t.srv.Serve(ln)
	return t, nil
}

// ServeHTTP answers and records the arrival.
func (t *target) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	site, err := strconv.Atoi(r.URL.Query().Get("site"))
	t.mu.Lock()
	if err == nil && site >= 0 && site < len(t.arrivals) {
		t.arrivals[site] = append(t.arrivals[site], at)
	}
	t.mu.Unlock()
	if t.delay > 0 {
		time.Sleep(t.delay)
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("ok\n"))
}

// record starts recording the arrivals of n sites afresh.
func (t *target) record(n int) {
	t.mu.Lock()
	t.arrivals = make([][]time.Time, n)
	t.mu.Unlock()
}

// take stops recording and returns the arrivals by site.
func (t *target) take() [][]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.arrivals
	t.arrivals = nil
	return a
}

func (t *target) close() { t.srv.Close() }
