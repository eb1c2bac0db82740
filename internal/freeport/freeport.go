// Package freeport finds loopback addresses for a process to bind later.
//
// A port taken from a port-0 listener comes from the kernel's ephemeral
// range (32768 and up on Linux), the same range outgoing connections draw
// their local ports from: between closing the probe listener and the
// process binding the port, any connection of the harness or of another
// node can take it, and the process then fails to start. Ports here are
// drawn below that range, where only explicit binds go.
package freeport

import (
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
)

// low and high bound the ports drawn: above the well-known and most
// registered service ports, below Linux's default ephemeral range.
const (
	low  = 20000
	high = 32000
)

// Addr returns a 127.0.0.1 address whose port was free for both TCP and
// UDP (memberlist gossips on both).
func Addr() (string, error) {
	for range 200 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(low+rand.IntN(high-low)))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			continue
		}
		pc.Close()
		return addr, nil
	}
	return "", errors.New("freeport: no free port below the ephemeral range after 200 tries")
}

// MustAddr is Addr for harnesses that cannot go on without a port.
func MustAddr() string {
	addr, err := Addr()
	if err != nil {
		panic(err)
	}
	return addr
}
