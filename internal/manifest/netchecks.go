package manifest

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Bounds of tcp_check and dns_check configs.
const (
	MaxTCPText     = 4096 // characters of send and expect
	MaxDNSExpected = 16
	MaxDNSValue    = 1024 // characters of an expected TXT value
	DefaultDNSType = "A"
	dnsTypesList   = "A, AAAA, CNAME, MX or TXT"
)

// DNSTypes are the record types a dns_check may ask for.
var DNSTypes = []string{"A", "AAAA", "CNAME", "MX", "TXT"}

// port decodes a port: an integer from 1 to 65535.
func (d *decoder) port(required bool) int {
	n, _ := d.integer("port", 1, 65535, CodePortInvalid, required)
	return int(n)
}

// sslOptions decodes the port and ca of an ssl_check. A port in the
// domain and config.port exclude each other.
func (d *decoder) sslOptions(c *Config) {
	c.Port = d.port(false)
	if c.Port != 0 && strings.Contains(c.Domain, ":") {
		d.add("port", CodePortInvalid, "and a port in domain (%s) exclude each other", c.Domain)
	}
	c.CA = d.ca()
}

// tcpConfig decodes the config of a tcp_check.
func (d *decoder) tcpConfig(c *Config) {
	if s, ok := d.str("host", CodeHostInvalid); ok {
		if !hostOK(s) {
			d.add("host", CodeHostInvalid, "must be a host name or an IP address, got %s", quote(s))
		}
		c.Host = s
	} else if !d.has("host") {
		d.missing("host", CodeHostInvalid, "a host name or an IP address")
	}
	c.Port = d.port(true)
	if n, ok := d.integer("timeout", MinCheckTimeout, MaxCheckTimeout, CodeCheckTimeoutInvalid, false); ok {
		c.Timeout = int(n)
	}
	c.Send = d.tcpText("send", CodeSendInvalid)
	c.Expect = d.tcpText("expect", CodeExpectInvalid)
}

// tcpText decodes send or expect: at most MaxTCPText characters.
func (d *decoder) tcpText(key, code string) string {
	s, ok := d.str(key, code)
	if ok && runes(s) > MaxTCPText {
		d.add(key, code, "must be at most %d characters long, got %d", MaxTCPText, runes(s))
	}
	return s
}

// dnsConfig decodes the config of a dns_check.
func (d *decoder) dnsConfig(c *Config) {
	if s, ok := d.str("name", CodeHostInvalid); ok {
		if !dnsNameOK(s) {
			d.add("name", CodeHostInvalid, "must be a DNS name, got %s", quote(s))
		}
		c.Name = s
	} else if !d.has("name") {
		d.missing("name", CodeHostInvalid, "the DNS name to look up")
	}
	if s, ok := d.str("type", CodeDNSTypeInvalid); ok {
		if !contains(DNSTypes, strings.ToUpper(s)) {
			d.add("type", CodeDNSTypeInvalid, "must be %s, got %s", dnsTypesList, quote(s))
		}
		c.Type = s
	}
	if s, ok := d.str("server", CodeHostInvalid); ok {
		host, port := splitServer(s)
		switch {
		case !hostOK(host) || strings.Trim(port, "0123456789") != "":
			d.add("server", CodeHostInvalid, "must be a host name or an IP address, optionally with :port, got %s", quote(s))
		case port != "" && !portOK(port):
			d.add("server", CodePortInvalid, "has a port that is not 1 to 65535: %s", quote(s))
		}
		c.Server = s
	}
	if n, ok := d.integer("timeout", MinCheckTimeout, MaxCheckTimeout, CodeCheckTimeoutInvalid, false); ok {
		c.Timeout = int(n)
	}
	if list, ok := d.strings("expected", CodeDNSExpectedInvalid); ok {
		if len(list) > MaxDNSExpected {
			d.add("expected", CodeDNSExpectedInvalid, "may hold at most %d values, got %d", MaxDNSExpected, len(list))
		}
		typ := strings.ToUpper(c.Type)
		if typ == "" {
			typ = DefaultDNSType
		}
		for i, v := range list {
			if why := dnsValueProblem(typ, v); why != "" && contains(DNSTypes, typ) {
				d.add("expected", CodeDNSExpectedInvalid, "item %d %s, got %s", i, why, quote(v))
			}
		}
		c.Expected = list
	}
}

// splitServer splits a DNS server's host[:port] ("[v6]:port" or a bare
// IPv6 address too).
func splitServer(s string) (host, port string) {
	if h, p, err := net.SplitHostPort(s); err == nil {
		return h, p
	}
	return s, ""
}

// hostOK reports whether s is a host name (as domainOK, without port) or
// an IP address.
func hostOK(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return !strings.Contains(s, "%") // no zone: the address must mean the same everywhere
	}
	return !strings.Contains(s, ":") && domainOK(s)
}

// dnsNameOK reports whether s is a DNS name to look up: labels of
// letters, digits, hyphens and underscores (_dmarc.example.com), 1 to 63
// each, 253 in all, an optional final dot.
func dnsNameOK(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > maxDomain {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if len(label) < 1 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		if strings.Trim(strings.ToLower(label), "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			return false
		}
	}
	return true
}

// dnsValueProblem says why v cannot be an answer of type typ, or "".
func dnsValueProblem(typ, v string) string {
	switch typ {
	case "A":
		if a, err := netip.ParseAddr(v); err != nil || !a.Is4() {
			return "must be an IPv4 address"
		}
	case "AAAA":
		if a, err := netip.ParseAddr(v); err != nil || !a.Is6() || a.Zone() != "" {
			return "must be an IPv6 address"
		}
	case "CNAME":
		if !dnsNameOK(v) {
			return "must be a DNS name"
		}
	case "MX":
		pref, host, hasPref := strings.Cut(v, " ")
		if !hasPref {
			pref, host = "", pref
		}
		if n, err := strconv.Atoi(pref); pref != "" && (err != nil || n < 0 || n > 65535) || !dnsNameOK(host) {
			return "must be a mail host, optionally after its preference (\"10 mail.example.com\")"
		}
	case "TXT":
		if n := runes(v); n < 1 || n > MaxDNSValue {
			return "must be 1 to " + strconv.Itoa(MaxDNSValue) + " characters long"
		}
	}
	return ""
}
