package httpprobe

import (
	"context"
	"crypto/tls"
	"net/http/httptrace"
	"sync"
	"time"

	"lookout/internal/probe"
)

// timer measures the phases of an attempt from httptrace callbacks, which
// may come from the dialing goroutines: it locks.
type timer struct {
	mu       sync.Mutex
	start    time.Time
	dnsStart time.Time
	conStart time.Time
	tlsStart time.Time
	dns      time.Duration
	connect  time.Duration
	tls      time.Duration
	// firstByte is the first response byte of the latest request, so the
	// final answer's once the attempt ends.
	firstByte time.Time
}

func newTimer(start time.Time) *timer { return &timer{start: start} }

// trace returns ctx with the timer's callbacks attached; every request of
// a redirect chain made with it reports to the timer.
func (m *timer) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		DNSStart: func(httptrace.DNSStartInfo) { m.mark(&m.dnsStart) },
		DNSDone:  func(httptrace.DNSDoneInfo) { m.add(&m.dnsStart, &m.dns) },
		ConnectStart: func(string, string) {
			m.mu.Lock()
			defer m.mu.Unlock()
			// Parallel dials (IPv4 and IPv6) count from the first one.
			if m.conStart.IsZero() {
				m.conStart = time.Now()
			}
		},
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				m.add(&m.conStart, &m.connect)
			}
		},
		TLSHandshakeStart:    func() { m.mark(&m.tlsStart) },
		TLSHandshakeDone:     func(tls.ConnectionState, error) { m.add(&m.tlsStart, &m.tls) },
		GotFirstResponseByte: func() { m.mark(&m.firstByte) },
	})
}

// mark sets *at to now.
func (m *timer) mark(at *time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*at = time.Now()
}

// add adds the time since *from to *sum and clears *from, if it is set.
func (m *timer) add(from *time.Time, sum *time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !from.IsZero() {
		*sum += time.Since(*from)
		*from = time.Time{}
	}
}

// timings returns the phases, with the attempt ending at end.
func (m *timer) timings(end time.Time) probe.Timings {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := probe.Timings{DNS: m.dns, Connect: m.connect, TLS: m.tls, Total: end.Sub(m.start)}
	if !m.firstByte.IsZero() {
		t.TTFB = m.firstByte.Sub(m.start)
	}
	return t
}
