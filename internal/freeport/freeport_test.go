package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestAddrIsBindableBelowTheEphemeralRange(t *testing.T) {
	for range 20 {
		addr, err := Addr()
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(p)
		if port < low || port >= high {
			t.Fatalf("port %d outside [%d, %d)", port, low, high)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s was given as free but cannot be bound: %v", addr, err)
		}
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			ln.Close()
			t.Fatalf("%s is not free for UDP: %v", addr, err)
		}
		pc.Close()
		ln.Close()
	}
}

func TestAddrSkipsATakenPort(t *testing.T) {
	// Hold most of a small window and check Addr never returns a held port.
	held := map[string]bool{}
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for p := low; p < low+200; p++ {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		if l, err := net.Listen("tcp", addr); err == nil {
			lns = append(lns, l)
			held[addr] = true
		}
	}
	for range 200 {
		addr, err := Addr()
		if err != nil {
			t.Fatal(err)
		}
		if held[addr] {
			t.Fatalf("Addr returned %s, which a listener holds", addr)
		}
	}
}
