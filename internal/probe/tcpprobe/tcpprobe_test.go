package tcpprobe_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"lookout/internal/netguard"
	"lookout/internal/probe"
	"lookout/internal/probe/probetest"
	"lookout/internal/probe/tcpprobe"
)

func run(t probe.Target) probe.Result {
	return tcpprobe.New(probe.Options{}).Probe(context.Background(), t)
}

func TestConnectSendExpect(t *testing.T) {
	echo := probetest.NewTCPServer(t, probetest.Echo)
	r := run(probe.Target{Host: "127.0.0.1", Port: echo.Port})
	if r.Err != nil || r.TCP == nil || r.TCP.Connect <= 0 || r.Duration < r.TCP.Connect {
		t.Fatalf("connect only: err %v, tcp %+v", r.Err, r.TCP)
	}
	r = run(probe.Target{Host: "localhost", Port: echo.Port, Send: "PING\r\n", Expect: "PING"})
	if r.Err != nil || r.TCP.Read < 4 {
		t.Fatalf("send and expect: err %v, tcp %+v", r.Err, r.TCP)
	}
	banner := probetest.NewTCPServer(t, probetest.Banner("220 mail.corp.test ESMTP\r\n"))
	if r := run(probe.Target{Host: "127.0.0.1", Port: banner.Port, Expect: "ESMTP"}); r.Err != nil {
		t.Fatalf("a banner: %v", r.Err)
	}
}

func TestExpectFails(t *testing.T) {
	closer := probetest.NewTCPServer(t, func(c net.Conn) { _, _ = c.Write([]byte("BYE")) })
	r := run(probe.Target{Host: "127.0.0.1", Port: closer.Port, Expect: "HELLO"})
	if r.Err == nil || r.Err.Kind != probe.KindExpect || r.Err.Transient || r.Err.Message != `the connection closed after 3 bytes without "HELLO"` {
		t.Fatalf("closed: err %+v", r.Err)
	}
	// A server that talks on and on: the search stops at MaxRead.
	chatty := probetest.NewTCPServer(t, func(c net.Conn) {
		chunk := []byte(strings.Repeat("x", 1024))
		for {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	})
	r = run(probe.Target{Host: "127.0.0.1", Port: chatty.Port, Expect: "HELLO", Timeout: 5 * time.Second})
	if r.Err == nil || r.Err.Kind != probe.KindExpect || r.TCP.Read != tcpprobe.MaxRead || r.Err.Message != `"HELLO" is not in the first 65,536 bytes of the answer` {
		t.Fatalf("chatty: err %+v, tcp %+v", r.Err, r.TCP)
	}
}

// A server that accepts and never answers cannot hold the probe past its
// timeout, which is a transient failure.
func TestSilentServerTimesOut(t *testing.T) {
	silent := probetest.NewSilent(t)
	host, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(silent.URL, "http://"), "/"))
	p, _ := strconv.Atoi(port)
	r := run(probe.Target{Host: host, Port: p, Send: "hello", Expect: "world", Timeout: time.Second})
	if r.Err == nil || r.Err.Kind != probe.KindTimeout || !r.Err.Transient {
		t.Fatalf("err %+v, want a transient timeout", r.Err)
	}
}

func TestRefusedAndGuarded(t *testing.T) {
	port, _ := strconv.Atoi(probetest.ClosedPort(t))
	r := run(probe.Target{Host: "127.0.0.1", Port: port})
	if r.Err == nil || r.Err.Kind != probe.KindConnect || !r.Err.Transient || r.TCP != nil {
		t.Fatalf("refused: err %+v", r.Err)
	}
	// The control plane's dialer refuses loopback: no retry, the reason named.
	echo := probetest.NewTCPServer(t, probetest.Echo)
	guarded := tcpprobe.New(probe.Options{DialContext: netguard.New(netguard.Options{}).DialContext})
	r = guarded.Probe(context.Background(), probe.Target{Host: "127.0.0.1", Port: echo.Port})
	if r.Err == nil || r.Err.Kind != probe.KindTargetNotAllowed || r.Err.Transient || !strings.HasPrefix(r.Err.Message, "target not allowed:") {
		t.Fatalf("guarded: err %+v", r.Err)
	}
}
