package checkrun_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"lookout/internal/checkrun"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/probe"
)

func TestTargetAndFill(t *testing.T) {
	status := int64(204)
	tg := checkrun.Target(&raftv1.CheckConfig{Url: "https://x/", Method: "HEAD", Timeout: 7, ExpectedStatus: &status, ExpectedContent: "ok", Domain: "d:8443", WarningDays: 20, AlertDays: 5})
	want := probe.Target{URL: "https://x/", Method: "HEAD", Timeout: 7 * time.Second, ExpectedStatus: 204, ExpectedContent: "ok", Domain: "d:8443", WarningDays: 20, AlertDays: 5}
	if !reflect.DeepEqual(tg, want) {
		t.Fatalf("target %+v, want %+v", tg, want)
	}
	ex := &raftv1.Execution{}
	checkrun.Fill(ex, probe.Result{Duration: 1500 * time.Millisecond, Err: &probe.Error{Kind: probe.KindStatus, Message: "got 500"},
		HTTP: &probe.HTTP{StatusCode: 500, Timings: probe.Timings{TTFB: 30 * time.Millisecond, Total: 40 * time.Millisecond}}}, 2)
	if ex.GetAttempts() != 2 || ex.GetDurationMs() != 1500 || ex.GetError() != "got 500" || ex.GetErrorKind() != "unexpected_status" ||
		ex.GetHttp().GetStatusCode() != 500 || ex.GetHttp().GetTtfbMs() != 30 || ex.GetSsl() != nil {
		t.Fatalf("filled %v", ex)
	}
	checkrun.Fill(ex, probe.Result{SSL: &probe.SSL{DaysLeft: 40, DNSNames: []string{"a"}}}, 3)
	if ex.GetError() != "" || ex.GetHttp() != nil || ex.GetSsl().GetDaysLeft() != 40 {
		t.Fatalf("a passing attempt left %v", ex)
	}
}

func TestBound(t *testing.T) {
	long := strings.Repeat("é", 2000) // 2 bytes a rune
	names := make([]string, 40)
	for i := range names {
		names[i] = strings.Repeat("n", 300)
	}
	ex := &raftv1.Execution{Error: long, ErrorKind: long, Ssl: &raftv1.ExecutionSSL{Issuer: long, Subject: long, DnsNames: names}}
	checkrun.Bound(ex)
	for _, c := range []struct {
		s   string
		max int
	}{{ex.Error, checkrun.MaxError}, {ex.ErrorKind, checkrun.MaxLabel}, {ex.Ssl.Issuer, checkrun.MaxText}, {ex.Ssl.Subject, checkrun.MaxText}} {
		if len(c.s) > c.max || len(c.s) < c.max-1 || !utf8.ValidString(c.s) {
			t.Fatalf("cut to %d bytes (max %d), valid %v", len(c.s), c.max, utf8.ValidString(c.s))
		}
	}
	if len(ex.Ssl.DnsNames) != checkrun.MaxDNSNames || len(ex.Ssl.DnsNames[0]) != checkrun.MaxDNSName {
		t.Fatalf("dns names %d, first %d bytes", len(ex.Ssl.DnsNames), len(ex.Ssl.DnsNames[0]))
	}
}

// Every option of the stored config reaches the probe target, and the
// TCP and DNS details fill the execution.
func TestTargetOptionsAndNewKinds(t *testing.T) {
	c := &raftv1.CheckConfig{Url: "https://x/", ExpectedStatuses: []string{"2xx", "304"}, ContentAbsent: "down",
		Headers: []*raftv1.HTTPHeader{{Name: "Authorization", Value: "Bearer t"}}, Body: "{}", BasicAuth: &raftv1.HTTPBasicAuth{Username: "u", Password: "p"},
		NoRedirects: true, JsonPath: []*raftv1.JSONPathAssertion{{Path: "$.ok", EqualsJson: "true"}}, MaxResponseMs: 1500,
		Ca: "CA", TlsSkipVerify: true, ClientCert: "CERT", ClientKey: "KEY", Port: 8443, Host: "db", Send: "PING", Expect: "PONG",
		DnsName: "example.com", DnsType: "MX", DnsServer: "10.0.0.53", DnsExpected: []string{"mail.example.com"}}
	want := probe.Target{URL: "https://x/", ExpectedStatuses: []string{"2xx", "304"}, ContentAbsent: "down",
		Headers: []probe.Header{{Name: "Authorization", Value: "Bearer t"}}, Body: "{}", BasicAuth: &probe.BasicAuth{Username: "u", Password: "p"},
		NoRedirects: true, JSONPath: []probe.JSONAssertion{{Path: "$.ok", Equals: "true"}}, MaxResponse: 1500 * time.Millisecond,
		CA: "CA", TLSSkipVerify: true, ClientCert: "CERT", ClientKey: "KEY", Port: 8443, Host: "db", Send: "PING", Expect: "PONG",
		Name: "example.com", RecordType: "MX", Server: "10.0.0.53", Expected: []string{"mail.example.com"}}
	if got := checkrun.Target(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("target\n%+v\nwant\n%+v", got, want)
	}
	ex := &raftv1.Execution{}
	checkrun.Fill(ex, probe.Result{TCP: &probe.TCP{Connect: 12 * time.Millisecond}}, 1)
	if ex.GetTcp().GetConnectMs() != 12 || ex.GetDns() != nil {
		t.Fatalf("tcp %v", ex)
	}
	checkrun.Fill(ex, probe.Result{DNS: &probe.DNS{Answers: []string{"192.0.2.1"}, RTT: 3 * time.Millisecond}}, 1)
	if ex.GetTcp() != nil || !slices.Equal(ex.GetDns().GetAnswers(), []string{"192.0.2.1"}) || ex.GetDns().GetRttMs() != 3 {
		t.Fatalf("dns %v", ex)
	}
	answers := make([]string, 40)
	for i := range answers {
		answers[i] = strings.Repeat("t", 600)
	}
	ex.Dns.Answers = answers
	checkrun.Bound(ex)
	if len(ex.Dns.Answers) != checkrun.MaxAnswers || len(ex.Dns.Answers[0]) != checkrun.MaxAnswer {
		t.Fatalf("answers %d, first %d bytes", len(ex.Dns.Answers), len(ex.Dns.Answers[0]))
	}
	for _, kind := range []string{checkrun.KindHTTPCheck, checkrun.KindSSLCheck, checkrun.KindTCPCheck, checkrun.KindDNSCheck} {
		if checkrun.Probers(probe.Options{})[kind] == nil {
			t.Errorf("no prober for %s", kind)
		}
	}
}
