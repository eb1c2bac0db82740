package probetest

import (
	"net"
	"sync"
	"testing"
)

// TCPServer is a TCP listener on 127.0.0.1 that hands each connection to
// a handler. It is closed with its connections when the test ends.
type TCPServer struct {
	// Addr is its address, 127.0.0.1:port.
	Addr string
	// Port is its port.
	Port int
}

// NewTCPServer starts a TCPServer whose handle gets each connection (and
// closes it on return).
func NewTCPServer(t testing.TB, handle func(net.Conn)) *TCPServer {
	t.Helper()
	ln := listen(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Go(func() {
				defer func() {
					_ = c.Close()
					mu.Lock()
					delete(conns, c)
					mu.Unlock()
				}()
				handle(c)
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return &TCPServer{Addr: ln.Addr().String(), Port: ln.Addr().(*net.TCPAddr).Port}
}

// Echo is a handler that writes back what it reads.
func Echo(c net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Banner is a handler that writes text and then echoes (a server that
// greets first, as SMTP and SSH do).
func Banner(text string) func(net.Conn) {
	return func(c net.Conn) {
		if _, err := c.Write([]byte(text)); err == nil {
			Echo(c)
		}
	}
}
