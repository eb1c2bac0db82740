package httpserver_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"lookout/internal/httpserver"
)

// serveRPC serves o on loopback: paths under /rpc/ are RPC, authenticated
// by "Authorization: Bearer ok" (then MarkRPC); everything else answers
// its protocol.
func serveRPC(t *testing.T, o httpserver.Options) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/rpc/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ok" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		httpserver.MarkRPC(r.Context())
		io.WriteString(w, "rpc")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	o.RPCPrefixes = []string{"/rpc/"}
	srv := httpserver.New(mux, o)
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

// send writes one HTTP/1.1 request on c and returns its answer's status
// (0 when the connection closed or nothing came within 10 s).
func send(t *testing.T, c net.Conn, r *bufio.Reader, path, auth string) int {
	t.Helper()
	req := "GET " + path + " HTTP/1.1\r\nHost: x\r\n"
	if auth != "" {
		req += "Authorization: " + auth + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		return 0
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// While the public connections are at their cap, a new RPC connection is
// still served; it then counts against neither share. A public request on
// a connection beyond the cap waits for a public one to close, or is
// answered 503 when none does in time; an unauthenticated request on an
// RPC path does not take its connection out of the cap.
func TestRPCIsServedWhilePublicConnectionsAreAtTheirCap(t *testing.T) {
	addr := serveRPC(t, httpserver.Options{MaxConnections: 2, RPCConnections: 2, ProbationTimeout: 3 * time.Second}) // room for a loaded machine: the waiting request below must still be waiting when a slot frees
	type conn struct {
		c net.Conn
		r *bufio.Reader
	}
	open := func() conn {
		c := dial(t, addr)
		return conn{c, bufio.NewReader(c)}
	}
	var public []conn
	for range 2 {
		p := open()
		if code := send(t, p.c, p.r, "/", ""); code != 200 {
			t.Fatalf("public request within the cap: %d", code)
		}
		public = append(public, p)
	}
	// The public share is full; RPC gets in, more connections than the
	// reserve holds, since an authenticated RPC connection gives its slot
	// back.
	for i := range 3 {
		rpc := open()
		if code := send(t, rpc.c, rpc.r, "/rpc/x", "Bearer ok"); code != 200 {
			t.Fatalf("RPC connection %d while the public connections are at their cap: %d", i, code)
		}
	}
	// An unauthenticated RPC request is answered, but its connection is
	// still on probation: closed when it ends.
	rogue := open()
	if code := send(t, rogue.c, rogue.r, "/rpc/x", "Bearer guess"); code != http.StatusUnauthorized {
		t.Fatalf("unauthenticated RPC: %d", code)
	}
	closedByServer(t, rogue.c, "an unauthenticated RPC connection beyond the public cap")
	// A public request beyond the cap: 503 when no public connection
	// closes during its probation...
	late := open()
	if code := send(t, late.c, late.r, "/", ""); code != http.StatusServiceUnavailable {
		t.Fatalf("public request beyond the cap, none closing: %d", code)
	}
	// ...served when one does.
	waiting := open()
	got := make(chan int, 1)
	go func() { got <- send(t, waiting.c, waiting.r, "/", "") }()
	time.Sleep(100 * time.Millisecond) // let the request arrive and wait (either order passes)
	public[0].c.Close()
	if code := <-got; code != 200 {
		t.Fatalf("public request beyond the cap after one closed: %d", code)
	}
}

// Over h2c too: an RPC client's connection leaves the reserve once
// authenticated, so one reserved slot serves RPC client after client.
func TestRPCOverH2CLeavesTheReserve(t *testing.T) {
	addr := serveRPC(t, httpserver.Options{MaxConnections: 1, RPCConnections: 1})
	held := dial(t, addr)
	if code := send(t, held, bufio.NewReader(held), "/", ""); code != 200 {
		t.Fatalf("public request: %d", code)
	}
	for i := range 3 {
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}}
		req, _ := http.NewRequest("GET", "http://"+addr+"/rpc/x", nil)
		req.Header.Set("Authorization", "Bearer ok")
		res, err := c.Do(req)
		if err != nil {
			t.Fatalf("RPC client %d: %v", i, err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || res.Proto != "HTTP/2.0" {
			t.Fatalf("RPC client %d: %d %s", i, res.StatusCode, res.Proto)
		}
	}
}
