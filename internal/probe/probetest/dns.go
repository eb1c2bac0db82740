package probetest

import (
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"
)

// DNSServer is an authoritative DNS server on 127.0.0.1 (UDP and TCP on
// the same port) that answers from a zone given as records in zone-file
// text. A name with no record is NXDOMAIN; a question of a type the name
// lacks gets an empty answer; the name servfail.test. answers SERVFAIL.
// A UDP answer larger than the client's buffer is truncated, as a real
// server does, so that the client asks again over TCP.
type DNSServer struct {
	// Addr is its address, 127.0.0.1:port.
	Addr     string
	tcp, all atomic.Int64
}

// NewDNSServer starts a DNSServer answering with records, each a line
// such as "www.example.test. 60 IN A 192.0.2.1". It stops when the test
// ends.
func NewDNSServer(t testing.TB, records ...string) *DNSServer {
	t.Helper()
	zone := map[string][]dns.RR{}
	for _, line := range records {
		rr, err := dns.NewRR(line)
		if err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		name := strings.ToLower(rr.Header().Name)
		zone[name] = append(zone[name], rr)
	}
	udp, tcp := listenUDPAndTCP(t)
	s := &DNSServer{Addr: udp.LocalAddr().String()}
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		s.all.Add(1)
		m := answer(zone, q)
		if _, isTCP := w.RemoteAddr().(*net.TCPAddr); isTCP {
			s.tcp.Add(1)
		} else {
			size := dns.MinMsgSize
			if opt := q.IsEdns0(); opt != nil {
				size = int(opt.UDPSize())
			}
			m.Truncate(size)
		}
		_ = w.WriteMsg(m)
	})
	servers := []*dns.Server{{PacketConn: udp, Handler: handler}, {Listener: tcp, Handler: handler}}
	for _, srv := range servers {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { _ = srv.ActivateAndServe() }()
		<-started
	}
	t.Cleanup(func() {
		for _, srv := range servers {
			_ = srv.Shutdown()
		}
	})
	return s
}

// Queries returns how many questions came so far.
func (s *DNSServer) Queries() int { return int(s.all.Load()) }

// TCPQueries returns how many questions came over TCP so far.
func (s *DNSServer) TCPQueries() int { return int(s.tcp.Load()) }

// answer is the zone's answer to q: the records of the asked type, with
// a CNAME of the name followed (as a resolver does) when the name has no
// record of the type.
func answer(zone map[string][]dns.RR, q *dns.Msg) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(q)
	m.Authoritative = true
	if len(q.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		return m
	}
	name, qtype := strings.ToLower(q.Question[0].Name), q.Question[0].Qtype
	if name == "servfail.test." {
		m.Rcode = dns.RcodeServerFailure
		return m
	}
	if _, ok := zone[name]; !ok {
		m.Rcode = dns.RcodeNameError
		return m
	}
	for hops := 0; hops < 8; hops++ {
		var cname *dns.CNAME
		matched := false
		for _, rr := range zone[name] {
			if rr.Header().Rrtype == qtype {
				m.Answer = append(m.Answer, rr)
				matched = true
			} else if c, ok := rr.(*dns.CNAME); ok {
				cname = c
			}
		}
		if matched || cname == nil {
			break
		}
		m.Answer = append(m.Answer, cname)
		name = strings.ToLower(cname.Target)
	}
	if q.IsEdns0() != nil {
		m.SetEdns0(q.IsEdns0().UDPSize(), false)
	}
	return m
}

// listenUDPAndTCP listens on one port of 127.0.0.1 for UDP and TCP: a
// free UDP port, and the same for TCP unless it is taken, then another.
func listenUDPAndTCP(t testing.TB) (net.PacketConn, net.Listener) {
	t.Helper()
	for try := 0; ; try++ {
		udp, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		tcp, err := net.Listen("tcp", udp.LocalAddr().String())
		if err == nil {
			return udp, tcp
		}
		_ = udp.Close()
		if try == 20 {
			t.Fatal(err)
		}
	}
}
