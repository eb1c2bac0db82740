package netguard_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"lookout/internal/netguard"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		addr string
		want string // the kind of refused address; "" when allowed
	}{
		// Addresses of the public internet.
		{"93.184.215.14", ""},
		{"1.1.1.1", ""},
		{"8.8.8.8", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"169.253.255.255", ""},
		{"192.0.1.1", ""},
		{"223.255.255.255", ""},
		{"2606:4700:4700::1111", ""},
		{"2001:4860:4860::8888", ""},
		{"::ffff:93.184.215.14", ""},
		{"64:ff9b::5db8:d70e", ""}, // NAT64 of 93.184.215.14

		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"0.1.2.3", "this network"},
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"169.254.169.254", "cloud metadata"},
		{"169.254.1.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"febf::1", "link-local"},
		{"10.0.0.1", "private"},
		{"10.255.255.255", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd00:ec2::254", "private"},
		{"fec0::1", "private"},
		{"64:ff9b:1::a00:1", "private"},
		{"100.64.0.1", "shared"},
		{"100.100.100.200", "shared"},
		{"100.127.255.255", "shared"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "reserved"},
		{"192.0.0.192", "reserved"},
		// IPv6 forms of refused IPv4 addresses.
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:169.254.169.254", "cloud metadata"},
		{"::ffff:10.1.2.3", "private"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"64:ff9b::7f00:1", "loopback"},
		{"64:ff9b::a9fe:a9fe", "cloud metadata"},
		{"::127.0.0.1", "IPv4-compatible"},
	} {
		err := netguard.Check(netip.MustParseAddr(c.addr))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want allowed", c.addr, err)
			}
			continue
		}
		var ge *netguard.Error
		switch {
		case err == nil:
			t.Errorf("%s: allowed, want refused as %s", c.addr, c.want)
		case !errors.Is(err, netguard.ErrNotAllowed) || !errors.As(err, &ge):
			t.Errorf("%s: %v is not a *netguard.Error", c.addr, err)
		case !strings.HasPrefix(err.Error(), "target not allowed: "+ge.Addr.String()+" is ") || !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %q, want it to begin \"target not allowed: %s is\" and say %s", c.addr, err, ge.Addr, c.want)
		}
	}
	if err := netguard.Check(netip.Addr{}); err == nil || !strings.HasPrefix(err.Error(), "target not allowed: ") {
		t.Errorf("the zero Addr: %v, want refused", err)
	}
}
