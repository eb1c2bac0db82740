package probetest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Silent is a target that hangs: a TCP listener on 127.0.0.1 that accepts
// every connection and never answers, holding it open until the peer
// closes it or the test ends.
type Silent struct {
	// URL is http://<its address>/.
	URL string
	ln  net.Listener

	mu             sync.Mutex
	held, accepted int
	conns          map[net.Conn]struct{}
	closed         bool
}

// NewSilent starts a Silent listener, closed with its connections when the
// test ends.
func NewSilent(t testing.TB) *Silent {
	t.Helper()
	s := &Silent{ln: listen(t), conns: map[net.Conn]struct{}{}}
	s.URL = "http://" + s.ln.Addr().String() + "/"
	var wg sync.WaitGroup
	wg.Go(s.accept)
	t.Cleanup(func() {
		s.ln.Close()
		s.mu.Lock()
		s.closed = true
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		wg.Wait()
	})
	return s
}

// accept takes each connection and reads it (discarding what comes) until
// the peer closes it.
func (s *Silent) accept() {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.held++
		s.accepted++
		s.mu.Unlock()
		wg.Go(func() {
			_, _ = io.Copy(io.Discard, c)
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.held--
			s.mu.Unlock()
		})
	}
}

// Held is the number of connections open now; Accepted counts every
// connection accepted so far.
func (s *Silent) Held() (held, accepted int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held, s.accepted
}
