package clientaddr

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestResolve(t *testing.T) {
	trusted, err := ParseTrusted("10.0.0.0/8, 192.0.2.7 ,fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	res := New(trusted)
	for _, tc := range []struct {
		name   string
		peer   string
		xff    []string
		want   string
		wantIP string
	}{
		{name: "untrusted peer: its own address, the header ignored", peer: "203.0.113.9:5000", xff: []string{"198.51.100.1"}, want: "203.0.113.9"},
		{name: "trusted peer without the header", peer: "10.1.2.3:5000", want: "10.1.2.3"},
		{name: "one proxy", peer: "10.1.2.3:5000", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "spoofed left-most hops ignored", peer: "10.1.2.3:5000", xff: []string{"1.1.1.1, 2.2.2.2, 198.51.100.1"}, want: "198.51.100.1"},
		{name: "a chain of trusted proxies", peer: "10.1.2.3:5000", xff: []string{"6.6.6.6, 198.51.100.1, 192.0.2.7, 10.9.9.9"}, want: "198.51.100.1"},
		{name: "repeated headers run on", peer: "10.1.2.3:5000", xff: []string{"6.6.6.6, 198.51.100.1", "10.9.9.9"}, want: "198.51.100.1"},
		{name: "every hop trusted: the left-most", peer: "10.1.2.3:5000", xff: []string{"10.5.5.5, 192.0.2.7"}, want: "10.5.5.5"},
		{name: "garbage hop: the proxy that wrote it", peer: "10.1.2.3:5000", xff: []string{"198.51.100.1, unknown"}, want: "10.1.2.3"},
		{name: "hop with a port", peer: "10.1.2.3:5000", xff: []string{"198.51.100.1:4711"}, want: "198.51.100.1"},
		{name: "IPv6 hop in brackets, by its /64", peer: "[fd00::1]:5000", xff: []string{"[2001:db8:1:2:3::4]"}, want: "2001:db8:1:2::/64", wantIP: "2001:db8:1:2:3::4"},
		{name: "IPv4-mapped peer", peer: "[::ffff:10.1.2.3]:5000", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "IPv6 client by its /64", peer: "[2001:db8::1]:5000", want: "2001:db8::/64", wantIP: "2001:db8::1"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.peer
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		var got, gotIP string
		res.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			got, gotIP = Key(r), Addr(r).String()
		})).ServeHTTP(httptest.NewRecorder(), r)
		if tc.wantIP == "" {
			tc.wantIP = tc.want
		}
		if got != tc.want || gotIP != tc.wantIP {
			t.Errorf("%s: key %q addr %q, want %q %q", tc.name, got, gotIP, tc.want, tc.wantIP)
		}
	}
}

// Without Wrap (or without trusted proxies) the key is the TCP peer's.
func TestKeyWithoutWrap(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:5000"
	r.Header.Set("X-Forwarded-For", "198.51.100.1")
	if got := Key(r); got != "10.1.2.3" {
		t.Fatalf("key %q", got)
	}
	var got string
	New(nil).Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = Key(r) })).ServeHTTP(httptest.NewRecorder(), r)
	if got != "10.1.2.3" {
		t.Fatalf("no trusted proxies: key %q", got)
	}
}

func TestParseTrusted(t *testing.T) {
	if p, err := ParseTrusted(""); err != nil || len(p) != 0 {
		t.Fatalf("empty: %v %v", p, err)
	}
	if p, err := ParseTrusted("10.1.2.3/8"); err != nil || p[0].String() != "10.0.0.0/8" {
		t.Fatalf("masked: %v %v", p, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "10.0.0.0/8;"} {
		if _, err := ParseTrusted(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
