package dnsprobe_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"lookout/internal/netguard"
	"lookout/internal/probe"
	"lookout/internal/probe/dnsprobe"
	"lookout/internal/probe/probetest"
)

var zone = []string{
	"www.corp.test. 60 IN A 192.0.2.10",
	"www.corp.test. 60 IN A 192.0.2.11",
	"www.corp.test. 60 IN AAAA 2001:db8::10",
	"app.corp.test. 60 IN CNAME www.corp.test.",
	"corp.test. 60 IN MX 10 mail.corp.test.",
	"corp.test. 60 IN MX 20 backup.corp.test.",
	`corp.test. 60 IN TXT "v=spf1 " "-all"`,
}

func ask(t *testing.T, srv *probetest.DNSServer, target probe.Target) probe.Result {
	t.Helper()
	target.Server = srv.Addr
	return dnsprobe.New(probe.Options{}, dnsprobe.Options{}).Probe(context.Background(), target)
}

func TestAnswers(t *testing.T) {
	srv := probetest.NewDNSServer(t, zone...)
	for _, tc := range []struct {
		name, typ string
		expected  []string
		answers   []string
	}{
		{"www.corp.test", "A", []string{"192.0.2.11"}, []string{"192.0.2.10", "192.0.2.11"}},
		{"WWW.corp.test.", "A", nil, []string{"192.0.2.10", "192.0.2.11"}},
		{"www.corp.test", "AAAA", []string{"2001:db8:0::10"}, []string{"2001:db8::10"}},
		{"app.corp.test", "CNAME", []string{"WWW.corp.test."}, []string{"www.corp.test"}},
		// An A question for an alias answers the target's addresses.
		{"app.corp.test", "A", []string{"192.0.2.10"}, []string{"192.0.2.10", "192.0.2.11"}},
		{"corp.test", "MX", []string{"mail.corp.test", "20 backup.corp.test"}, []string{"10 mail.corp.test", "20 backup.corp.test"}},
		{"corp.test", "TXT", []string{"v=spf1 -all"}, []string{"v=spf1 -all"}},
	} {
		r := ask(t, srv, probe.Target{Name: tc.name, RecordType: tc.typ, Expected: tc.expected})
		if r.Err != nil || r.DNS == nil || !slices.Equal(r.DNS.Answers, tc.answers) || r.DNS.RTT <= 0 {
			t.Errorf("%s %s: err %v, dns %+v; want answers %v", tc.name, tc.typ, r.Err, r.DNS, tc.answers)
		}
	}
}

func TestFailures(t *testing.T) {
	srv := probetest.NewDNSServer(t, zone...)
	for _, tc := range []struct {
		name, typ string
		expected  []string
		kind      probe.Kind
		transient bool
		msg       string
	}{
		{"www.corp.test", "A", []string{"192.0.2.99"}, probe.KindDNSAnswer, false,
			"192.0.2.99 is not among the A records of www.corp.test (192.0.2.10, 192.0.2.11)"},
		{"corp.test", "MX", []string{"30 mail.corp.test", "other.test"}, probe.KindDNSAnswer, false,
			"30 mail.corp.test, other.test are not among the MX records of corp.test (10 mail.corp.test, 20 backup.corp.test)"},
		{"www.corp.test", "TXT", nil, probe.KindDNSAnswer, false, "no TXT record for www.corp.test"},
		{"nope.corp.test", "A", nil, probe.KindDNSNotFound, false, "the name nope.corp.test does not exist (NXDOMAIN)"},
		{"servfail.test", "A", nil, probe.KindDNSServer, true, "the server " + srv.Addr + " answered SERVFAIL"},
	} {
		r := ask(t, srv, probe.Target{Name: tc.name, RecordType: tc.typ, Expected: tc.expected})
		if r.Err == nil || r.Err.Kind != tc.kind || r.Err.Transient != tc.transient || r.Err.Message != tc.msg {
			t.Errorf("%s %s: err %+v, want %s %q", tc.name, tc.typ, r.Err, tc.kind, tc.msg)
		}
	}
}

// An answer too large for UDP comes back truncated and is asked again
// over TCP; the execution keeps at most MaxAnswers answers, and the
// judgement sees them all.
func TestTruncatedAndBounded(t *testing.T) {
	var records []string
	for i := range 100 {
		records = append(records, fmt.Sprintf(`big.corp.test. 60 IN TXT "%03d %s"`, i, strings.Repeat("x", 100)))
	}
	srv := probetest.NewDNSServer(t, records...)
	last := fmt.Sprintf("099 %s", strings.Repeat("x", 100))
	r := ask(t, srv, probe.Target{Name: "big.corp.test", RecordType: "TXT", Expected: []string{last}})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if srv.TCPQueries() != 1 || len(r.DNS.Answers) != dnsprobe.MaxAnswers {
		t.Fatalf("tcp queries %d, answers kept %d", srv.TCPQueries(), len(r.DNS.Answers))
	}
}

// The control plane's dialer refuses a server on an internal address: a
// tenant cannot query an internal resolver through the leader.
func TestServerGuarded(t *testing.T) {
	srv := probetest.NewDNSServer(t, zone...)
	p := dnsprobe.New(probe.Options{DialContext: netguard.New(netguard.Options{}).DialContext}, dnsprobe.Options{})
	r := p.Probe(context.Background(), probe.Target{Name: "www.corp.test", RecordType: "A", Server: srv.Addr})
	if r.Err == nil || r.Err.Kind != probe.KindTargetNotAllowed || r.Err.Transient {
		t.Fatalf("err %+v, want %s", r.Err, probe.KindTargetNotAllowed)
	}
}

// Without a server the resolver answers (here one pointed at the test
// server, as the system's would be at the operator's).
func TestSystemResolver(t *testing.T) {
	srv := probetest.NewDNSServer(t, zone...)
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Addr)
	}}
	p := dnsprobe.New(probe.Options{}, dnsprobe.Options{Resolver: res})
	for _, tc := range []struct {
		name, typ string
		answers   []string
	}{
		{"www.corp.test", "A", []string{"192.0.2.10", "192.0.2.11"}},
		{"www.corp.test", "AAAA", []string{"2001:db8::10"}},
		{"app.corp.test", "CNAME", []string{"www.corp.test"}},
		{"corp.test", "MX", []string{"10 mail.corp.test", "20 backup.corp.test"}},
		{"corp.test", "TXT", []string{"v=spf1 -all"}},
	} {
		r := p.Probe(context.Background(), probe.Target{Name: tc.name, RecordType: tc.typ})
		if r.Err != nil || !slices.Equal(r.DNS.Answers, tc.answers) {
			t.Errorf("%s %s: err %v, dns %+v", tc.name, tc.typ, r.Err, r.DNS)
		}
	}
	r := p.Probe(context.Background(), probe.Target{Name: "nope.corp.test", RecordType: "A"})
	if r.Err == nil || r.Err.Kind != probe.KindDNSNotFound {
		t.Fatalf("nxdomain: err %+v", r.Err)
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		qtype     uint16
		want, got string
		match     bool
	}{
		{dns.TypeA, "192.0.2.1", "192.0.2.1", true},
		{dns.TypeA, "192.0.2.1", "192.0.2.2", false},
		{dns.TypeAAAA, "2001:DB8::1", "2001:db8::1", true},
		{dns.TypeCNAME, "Www.Example.Com.", "www.example.com", true},
		{dns.TypeMX, "mail.example.com", "10 mail.example.com", true},
		{dns.TypeMX, "10 mail.example.com.", "10 mail.example.com", true},
		{dns.TypeMX, "20 mail.example.com", "10 mail.example.com", false},
		{dns.TypeTXT, "v=spf1", "v=spf1 -all", false},
	} {
		if got := dnsprobe.Match(tc.qtype, tc.want, tc.got); got != tc.match {
			t.Errorf("Match(%s, %q, %q) = %v", dns.TypeToString[tc.qtype], tc.want, tc.got, got)
		}
	}
}

// A server that never answers cannot hold the probe past its timeout.
func TestSilentServerTimesOut(t *testing.T) {
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = silent.Close() }()
	p := dnsprobe.New(probe.Options{}, dnsprobe.Options{})
	r := p.Probe(context.Background(), probe.Target{Name: "www.corp.test", RecordType: "A", Server: silent.LocalAddr().String(), Timeout: time.Second})
	if r.Err == nil || r.Err.Kind != probe.KindTimeout || !r.Err.Transient {
		t.Fatalf("err %+v, want a transient timeout", r.Err)
	}
}
