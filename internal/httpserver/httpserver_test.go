package httpserver_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"lookout/internal/httpserver"
)

// serve starts a server with o on loopback and returns its address.
func serve(t *testing.T, o httpserver.Options) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}), o)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer waits (generously) for the server to close c, reading
// and dropping whatever it sends first (an HTTP/2 server's SETTINGS and
// GOAWAY).
func closedByServer(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the server kept the connection open", what)
	}
}

const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// Clients that connect and then say nothing, or stop halfway, are
// disconnected after the timeouts, over HTTP/1 and h2c alike.
func TestSilentClientsAreDisconnected(t *testing.T) {
	addr := serve(t, httpserver.Options{ReadHeaderTimeout: 200 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	for _, tc := range []struct {
		name string
		send func(c net.Conn)
	}{
		{"nothing", func(net.Conn) {}},
		{"half a request line", func(c net.Conn) { io.WriteString(c, "GET / HT") }},
		{"headers never finished", func(c net.Conn) { io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n") }},
		{"half an h2c preface", func(c net.Conn) { io.WriteString(c, preface[:14]) }},
		{"the h2c preface and nothing", func(c net.Conn) { io.WriteString(c, preface) }},
		{"the h2c preface and settings, then nothing", func(c net.Conn) {
			io.WriteString(c, preface)
			http2.NewFramer(c, nil).WriteSettings()
		}},
		{"a kept-alive HTTP/1 connection", func(c net.Conn) {
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("request: %v %v", resp, err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			tc.send(c)
			closedByServer(t, c, tc.name)
		})
	}
}

// Both protocols are served on the one listener.
func TestHTTP1AndH2C(t *testing.T) {
	addr := serve(t, httpserver.Options{})
	h1 := get(t, http.DefaultClient, "http://"+addr+"/")
	h2c := &http.Client{Transport: &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	if got := get(t, h2c, "http://"+addr+"/"); h1 != "HTTP/1.1" || got != "HTTP/2.0" {
		t.Fatalf("protocols %q and %q", h1, got)
	}
}

func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// Connections beyond MaxConnections wait until one closes.
func TestConnectionCap(t *testing.T) {
	addr := serve(t, httpserver.Options{MaxConnections: 2})
	request := func(c net.Conn) *bufio.Reader {
		t.Helper()
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		return bufio.NewReader(c)
	}
	answered := func(r *bufio.Reader) error {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || !strings.HasPrefix(string(b), "HTTP/1.1") {
			return errors.New(resp.Status)
		}
		return nil
	}
	// Two kept-alive connections, answered: the cap is reached.
	held := []net.Conn{dial(t, addr), dial(t, addr)}
	for _, c := range held {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := answered(request(c)); err != nil {
			t.Fatal(err)
		}
	}
	// A third is not served while they are open...
	third := dial(t, addr)
	r := request(third)
	third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := r.Peek(1); err == nil {
		t.Fatal("a connection beyond the cap was served")
	}
	// ...and is as soon as one of them closes.
	held[0].Close()
	third.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := answered(r); err != nil {
		t.Fatalf("the waiting connection after one closed: %v", err)
	}
}
