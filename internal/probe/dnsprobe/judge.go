package dnsprobe

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/miekg/dns"

	"lookout/internal/probe"
)

// judge compares the answers with the expected ones: each expected value
// must be among them (every answer is compared, not only those kept);
// with none expected, one answer is enough.
func judge(t probe.Target, qtype uint16, answers []string) *probe.Error {
	typ := dns.TypeToString[qtype]
	if len(answers) == 0 {
		return &probe.Error{Kind: probe.KindDNSAnswer, Message: fmt.Sprintf("no %s record for %s", typ, hostName(t.Name))}
	}
	var missing []string
	for _, want := range t.Expected {
		found := false
		for _, got := range answers {
			if Match(qtype, want, got) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, want)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	shown := bound(answers)
	list := strings.Join(shown, ", ")
	if len(shown) < len(answers) {
		list += fmt.Sprintf(", ... (%d in all)", len(answers))
	}
	verb := "is"
	if len(missing) > 1 {
		verb = "are"
	}
	return &probe.Error{Kind: probe.KindDNSAnswer,
		Message: fmt.Sprintf("%s %s not among the %s records of %s (%s)", strings.Join(missing, ", "), verb, typ, hostName(t.Name), list)}
}

// Match reports whether the answer got is the expected value want: the
// same address (A, AAAA), the same name in any case with or without the
// final dot (CNAME), the same host and, when want gives one, preference
// (MX: "mail.example.com" or "10 mail.example.com"), or the same text
// (TXT).
func Match(qtype uint16, want, got string) bool {
	switch qtype {
	case dns.TypeA, dns.TypeAAAA:
		w, err1 := netip.ParseAddr(want)
		g, err2 := netip.ParseAddr(got)
		return err1 == nil && err2 == nil && w.Unmap() == g.Unmap()
	case dns.TypeCNAME:
		return hostName(want) == hostName(got)
	case dns.TypeMX:
		wPref, wHost, hasPref := strings.Cut(strings.TrimSpace(want), " ")
		if !hasPref {
			wHost, wPref = wPref, ""
		}
		gPref, gHost, _ := strings.Cut(got, " ")
		return hostName(wHost) == hostName(gHost) && (wPref == "" || wPref == gPref)
	}
	return want == got
}
