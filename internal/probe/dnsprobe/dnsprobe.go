// Package dnsprobe is the probe of a dns_check: one question (the check's
// name and record type) to the check's server over UDP, again over TCP
// when the answer is truncated, or to the system resolver when the check
// names no server; then the answers of the asked type compared with the
// expected ones.
//
// A query to a server is sent through probe.Options.DialContext, so on
// the control plane it passes the same address rule as every other probe
// (a tenant cannot reach an internal resolver through the leader). The
// system resolver is the operator's: a lookup through it is not guarded,
// and a dns_check never connects to the addresses it resolves.
package dnsprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"

	"lookout/internal/probe"
)

// Bounds of an answer.
const (
	// MaxAnswers is how many answers an execution keeps.
	MaxAnswers = 16
	// MaxAnswerLen bounds one answer's text (a long TXT record is cut).
	MaxAnswerLen = 255
	// udpSize is the EDNS0 buffer size offered: larger answers come back
	// truncated and are asked again over TCP (at most 64 KiB).
	udpSize = 4096
)

// DefaultPort is the port of a server without one.
const DefaultPort = "53"

// Types are the record types a dns_check may ask for.
var Types = map[string]uint16{"A": dns.TypeA, "AAAA": dns.TypeAAAA, "CNAME": dns.TypeCNAME, "MX": dns.TypeMX, "TXT": dns.TypeTXT}

// Prober probes dns_checks. It is safe for concurrent use.
type Prober struct {
	opts     probe.Options
	resolver *net.Resolver
}

var _ probe.Prober = (*Prober)(nil)

// Options are what a Prober needs besides probe.Options.
type Options struct {
	// Resolver answers the checks without a server; nil means
	// net.DefaultResolver (the system's). Tests point one at a server on
	// loopback.
	Resolver *net.Resolver
}

// New returns a Prober with the given options.
func New(opts probe.Options, o Options) *Prober {
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	return &Prober{opts: opts, resolver: o.Resolver}
}

// Probe makes one attempt of the dns_check t within its timeout.
func (p *Prober) Probe(ctx context.Context, t probe.Target) (res probe.Result) {
	started := time.Now()
	defer func() { res.Duration = time.Since(started) }()
	timeout := t.EffectiveTimeout()
	attempt, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	qtype, ok := Types[strings.ToUpper(t.RecordType)]
	if !ok || t.Name == "" {
		res.Err = &probe.Error{Kind: probe.KindInvalidTarget, Message: fmt.Sprintf("cannot ask for %q records of %q", t.RecordType, t.Name)}
		return res
	}
	var answers []string
	var rtt time.Duration
	var perr *probe.Error
	if t.Server != "" {
		answers, rtt, perr = p.ask(ctx, attempt, t, qtype, timeout)
	} else {
		answers, rtt, perr = p.lookup(ctx, attempt, t, qtype, timeout)
	}
	if perr != nil {
		res.Err = perr
		return res
	}
	res.DNS = &probe.DNS{Answers: bound(answers), RTT: rtt}
	res.Err = judge(t, qtype, answers)
	return res
}

// ask sends the question to t.Server, over UDP and, when the answer is
// truncated, again over TCP.
func (p *Prober) ask(parent, attempt context.Context, t probe.Target, qtype uint16, timeout time.Duration) ([]string, time.Duration, *probe.Error) {
	server := t.Server
	if _, _, err := net.SplitHostPort(server); err != nil {
		server = net.JoinHostPort(strings.Trim(server, "[]"), DefaultPort)
	}
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(t.Name), qtype)
	q.SetEdns0(udpSize, false)
	var r *dns.Msg
	var rtt time.Duration
	for _, network := range []string{"udp", "tcp"} {
		conn, err := p.opts.Dialer()(attempt, network, server)
		if err != nil {
			return nil, 0, probe.Classify(parent, err, timeout, p.opts.Clock()())
		}
		stop := context.AfterFunc(attempt, func() { _ = conn.Close() })
		client := &dns.Client{Net: network, UDPSize: udpSize}
		r, rtt, err = client.ExchangeWithConnContext(attempt, q, &dns.Conn{Conn: conn})
		stop()
		_ = conn.Close()
		if err != nil {
			if parent.Err() == nil && attempt.Err() != nil {
				err = context.DeadlineExceeded
			}
			return nil, 0, probe.Classify(parent, err, timeout, p.opts.Clock()())
		}
		if !r.Truncated {
			break
		}
	}
	if r.Truncated {
		return nil, rtt, &probe.Error{Kind: probe.KindDNSServer, Message: "the answer is truncated even over TCP", Transient: true}
	}
	switch r.Rcode {
	case dns.RcodeSuccess:
	case dns.RcodeNameError:
		return nil, rtt, notFound(t.Name)
	default:
		// SERVFAIL may pass (a resolver that could not reach the
		// authority); any other error will not.
		return nil, rtt, &probe.Error{Kind: probe.KindDNSServer, Transient: r.Rcode == dns.RcodeServerFailure,
			Message: fmt.Sprintf("the server %s answered %s", t.Server, dns.RcodeToString[r.Rcode])}
	}
	var out []string
	for _, rr := range r.Answer {
		if rr.Header().Rrtype != qtype {
			continue // the CNAMEs on the way to the asked type
		}
		switch v := rr.(type) {
		case *dns.A:
			out = append(out, v.A.String())
		case *dns.AAAA:
			out = append(out, v.AAAA.String())
		case *dns.CNAME:
			out = append(out, hostName(v.Target))
		case *dns.MX:
			out = append(out, fmt.Sprintf("%d %s", v.Preference, hostName(v.Mx)))
		case *dns.TXT:
			out = append(out, strings.Join(v.Txt, ""))
		}
	}
	return out, rtt, nil
}

// lookup asks the system resolver.
func (p *Prober) lookup(parent, attempt context.Context, t probe.Target, qtype uint16, timeout time.Duration) ([]string, time.Duration, *probe.Error) {
	start := time.Now()
	var out []string
	var err error
	switch qtype {
	case dns.TypeA, dns.TypeAAAA:
		network := "ip4"
		if qtype == dns.TypeAAAA {
			network = "ip6"
		}
		var addrs []netip.Addr
		addrs, err = p.resolver.LookupNetIP(attempt, network, t.Name)
		for _, a := range addrs {
			out = append(out, a.Unmap().String())
		}
	case dns.TypeCNAME:
		var cname string
		cname, err = p.resolver.LookupCNAME(attempt, t.Name)
		// A name without a CNAME resolves to itself.
		if err == nil && !strings.EqualFold(hostName(cname), hostName(t.Name)) {
			out = append(out, hostName(cname))
		}
	case dns.TypeMX:
		var mxs []*net.MX
		mxs, err = p.resolver.LookupMX(attempt, t.Name)
		for _, mx := range mxs {
			out = append(out, fmt.Sprintf("%d %s", mx.Pref, hostName(mx.Host)))
		}
	case dns.TypeTXT:
		out, err = p.resolver.LookupTXT(attempt, t.Name)
	}
	rtt := time.Since(start)
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return nil, rtt, notFound(t.Name)
	case err != nil && parent.Err() == nil && attempt.Err() != nil:
		return nil, rtt, probe.Classify(parent, context.DeadlineExceeded, timeout, p.opts.Clock()())
	case err != nil:
		return nil, rtt, probe.Classify(parent, err, timeout, p.opts.Clock()())
	}
	return out, rtt, nil
}

func notFound(name string) *probe.Error {
	return &probe.Error{Kind: probe.KindDNSNotFound, Message: fmt.Sprintf("the name %s does not exist (NXDOMAIN)", hostName(name))}
}

// hostName is a name without its final dot, in lower case.
func hostName(s string) string {
	return strings.ToLower(strings.TrimSuffix(s, "."))
}

// bound keeps at most MaxAnswers answers of at most MaxAnswerLen bytes.
func bound(answers []string) []string {
	if len(answers) > MaxAnswers {
		answers = answers[:MaxAnswers]
	}
	out := make([]string, len(answers))
	for i, a := range answers {
		if len(a) > MaxAnswerLen {
			a = strings.ToValidUTF8(a[:MaxAnswerLen], "")
		}
		out[i] = a
	}
	return out
}
