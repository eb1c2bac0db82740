package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestSocketOwner finds this process as the holder of a connection it
// dialed, and no one when it is not among the processes asked.
func TestSocketOwner(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id, err := socketOwner(c, map[int]string{os.Getpid(): "me"})
	if err != nil || id != "me" {
		t.Fatalf("socketOwner = %q, %v; want me", id, err)
	}
	if id, err := socketOwner(c, map[int]string{os.Getpid() + 1_000_000: "other"}); err == nil {
		t.Fatalf("socketOwner found %q among processes that do not hold the socket", id)
	}
}

// echoNode is a "node" b behind a proxy, and dialers that the proxy
// identifies as nodes a and c by their local port.
type echoNode struct {
	t     *testing.T
	net   *Net
	proxy *Proxy
	mu    sync.Mutex
	ports map[int]string
}

func newEchoNode(t *testing.T) *echoNode {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	e := &echoNode{t: t, net: NewNet(), ports: map[int]string{}}
	e.proxy, err = NewProxy(e.net, "b", ln.Addr().String(), func(c net.Conn) (string, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.ports[c.RemoteAddr().(*net.TCPAddr).Port], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.proxy.Close(); e.net.CloseAll() })
	return e
}

// dial connects as node id through the proxy.
func (e *echoNode) dial(id string) net.Conn {
	port := freePort(e.t)
	e.mu.Lock()
	e.ports[port] = id
	e.mu.Unlock()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}}
	c, err := d.Dial("tcp", e.proxy.Addr())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// roundTrip writes a line and reads it back within wait; "" when nothing
// came back (err tells whether the connection failed).
func roundTrip(c net.Conn, line string, wait time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(wait))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if len(got) > 0 {
		got = got[:len(got)-1]
	}
	return got, err
}

// TestProxyHoldsAndHeals: a holding cut between a and b stops their
// traffic without closing the connection; the heal delivers what waited;
// c, not cut, talks to b all along.
func TestProxyHoldsAndHeals(t *testing.T) {
	e := newEchoNode(t)
	a, c := e.dial("a"), e.dial("c")
	if got, err := roundTrip(a, "hello", 5*time.Second); got != "hello" {
		t.Fatalf("before the cut: %q, %v", got, err)
	}
	e.net.Isolate("a", []string{"a", "b"}, false)
	if got, err := roundTrip(a, "held", 300*time.Millisecond); got != "" || !isTimeout(err) {
		t.Fatalf("across a holding cut: %q, %v; want a timeout", got, err)
	}
	if got, err := roundTrip(c, "other", 5*time.Second); got != "other" {
		t.Fatalf("a link outside the cut: %q, %v", got, err)
	}
	e.net.Heal()
	a.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := bufio.NewReader(a).ReadString('\n')
	if got != "held\n" {
		t.Fatalf("after the heal: %q, %v; want what was held", got, err)
	}
}

// TestProxyDrops: a dropping cut closes the open connection across it
// and every new one, and lets new ones through after the heal.
func TestProxyDrops(t *testing.T) {
	e := newEchoNode(t)
	a := e.dial("a")
	if got, err := roundTrip(a, "hello", 5*time.Second); got != "hello" {
		t.Fatalf("before the cut: %q, %v", got, err)
	}
	e.net.Isolate("b", []string{"a", "b", "c"}, true)
	if got, err := roundTrip(a, "x", 5*time.Second); got != "" || err == nil || isTimeout(err) {
		t.Fatalf("open connection across a dropping cut: %q, %v; want it closed", got, err)
	}
	if got, err := roundTrip(e.dial("c"), "y", 5*time.Second); got != "" || err == nil || isTimeout(err) {
		t.Fatalf("new connection across a dropping cut: %q, %v; want it closed", got, err)
	}
	e.net.Heal()
	for i := 0; i < 3; i++ {
		want := "z" + strconv.Itoa(i)
		if got, err := roundTrip(e.dial("a"), want, 5*time.Second); got != want {
			t.Fatalf("after the heal: %q, %v", got, err)
		}
	}
	if e.proxy.Dropped.Load() == 0 {
		t.Fatal("no connection counted as dropped")
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
