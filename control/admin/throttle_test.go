package admin_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"lookout/control/admin"
	"lookout/internal/clientaddr"
)

// Wrong operator tokens are throttled per client address: after 10, the
// address gets 429 with Retry-After for wrong tokens and requests without
// one until its bucket refills (one failure a second); the right token is
// never refused, and other addresses are not affected.
func TestWrongTokensAreThrottledPerAddress(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, time.March, 15, 12, 30, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	api := admin.New(admin.Options{Cluster: &resultCluster{}, Token: "right", Now: clock})
	mux := http.NewServeMux()
	api.Register(mux)
	send := func(addr, auth string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/admin/v1/cluster", nil)
		req.RemoteAddr = addr
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		return w
	}
	want := func(w *httptest.ResponseRecorder, status int, what string) {
		t.Helper()
		if w.Code != status {
			t.Fatalf("%s: %d %s, want %d", what, w.Code, w.Body, status)
		}
		if status == http.StatusTooManyRequests {
			if w.Header().Get("Retry-After") == "" || w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("%s: 429 headers %v", what, w.Header())
			}
			(response{status: w.Code, header: w.Header(), body: w.Body.Bytes()}).wantError(t, http.StatusTooManyRequests, "rate_limited", "too many wrong operator tokens")
		}
	}
	attacker, other := "192.0.2.7:40000", "198.51.100.1:40000"
	for i := range 10 {
		want(send(attacker, "Bearer guess"), http.StatusUnauthorized, fmt.Sprint("wrong token ", i))
	}
	want(send(attacker, "Bearer guess"), http.StatusTooManyRequests, "11th wrong token")
	want(send("192.0.2.7:40001", "Bearer right"), http.StatusOK, "the right token from a throttled address")
	want(send(attacker, ""), http.StatusTooManyRequests, "no token from a throttled address")
	if got := send(attacker, "Bearer guess").Header().Get("Retry-After"); got != "1" {
		t.Fatalf("Retry-After %q, want 1", got)
	}
	// Another address is not affected, and a missing token is no failure.
	want(send(other, "Bearer right"), http.StatusOK, "the right token from another address")
	for range 20 {
		want(send(other, ""), http.StatusUnauthorized, "no token")
	}
	want(send(other, "Bearer right"), http.StatusOK, "after requests without a token")
	// A second later one failure is allowed again; the right token passes
	// and costs nothing.
	advance(time.Second)
	want(send(attacker, "Bearer right"), http.StatusOK, "the right token after a second")
	want(send(attacker, "Bearer right"), http.StatusOK, "the right token again")
	want(send(attacker, ""), http.StatusUnauthorized, "no token once the bucket has a failure again")
	want(send(attacker, "Bearer guess"), http.StatusUnauthorized, "one more wrong token")
	want(send(attacker, "Bearer guess"), http.StatusTooManyRequests, "and throttled again")
	// An IPv6 client is throttled by its /64.
	for range 10 {
		want(send("[2001:db8:1:2::5]:4000", "Bearer guess"), http.StatusUnauthorized, "IPv6 wrong token")
	}
	want(send("[2001:db8:1:2:ffff::9]:4000", "Bearer guess"), http.StatusTooManyRequests, "another host of the same /64")
	want(send("[2001:db8:1:3::5]:4000", "Bearer guess"), http.StatusUnauthorized, "another /64")
}

// Concurrent wrong guesses from one address cannot all be checked before
// the first failure counts: at most the burst of them are answered 401.
func TestConcurrentWrongTokensAreThrottled(t *testing.T) {
	api := admin.New(admin.Options{Cluster: &resultCluster{}, Token: "right", Now: func() time.Time { return time.Unix(1e9, 0) }})
	mux := http.NewServeMux()
	api.Register(mux)
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			req := httptest.NewRequest("GET", "/admin/v1/cluster", nil)
			req.RemoteAddr = "192.0.2.7:1"
			req.Header.Set("Authorization", "Bearer guess")
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, req)
			mu.Lock()
			counts[w.Code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[http.StatusUnauthorized] != 10 || counts[http.StatusTooManyRequests] != 40 {
		t.Fatalf("answers %v, want 10 401s and 40 429s", counts)
	}
}

// Beyond the tracked addresses' cap the new ones share one bucket, but it
// never keeps the right token out: an attacker who fills the table and
// empties the shared bucket does not lock the operator out.
func TestRightTokenPassesOnceTableIsFull(t *testing.T) {
	now := time.Unix(1e9, 0)
	api := admin.New(admin.Options{Cluster: &resultCluster{}, Token: "right", Now: func() time.Time { return now }})
	mux := http.NewServeMux()
	api.Register(mux)
	send := func(addr, auth string) int {
		req := httptest.NewRequest("GET", "/admin/v1/cluster", nil)
		req.RemoteAddr = addr
		req.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		return w.Code
	}
	addr := func(i int) string { return fmt.Sprintf("10.%d.%d.%d:1", i>>16&0xff, i>>8&0xff, i&0xff) }
	const tracked = 10_000
	for i := range tracked {
		if code := send(addr(i), "Bearer guess"); code != http.StatusUnauthorized {
			t.Fatalf("wrong token from address %d: %d, want 401", i, code)
		}
	}
	// Past the cap: the shared bucket takes 10 failures, then 429s.
	for i := range 10 {
		if code := send(addr(tracked+i), "Bearer guess"); code != http.StatusUnauthorized {
			t.Fatalf("wrong token from overflow address %d: %d, want 401", i, code)
		}
	}
	if code := send(addr(tracked+10), "Bearer guess"); code != http.StatusTooManyRequests {
		t.Fatalf("wrong token once the shared bucket is empty: %d, want 429", code)
	}
	if code := send(addr(tracked+11), "Bearer right"); code != http.StatusOK {
		t.Fatalf("the right token from a new address past the cap: %d, want 200", code)
	}
	if code := send(addr(tracked+12), "Bearer guess"); code != http.StatusTooManyRequests {
		t.Fatalf("wrong token after the right one: %d, want 429", code)
	}
}

// Behind a proxy: with --trusted-proxies the throttle keys on the client
// of X-Forwarded-For, so one client's wrong tokens do not throttle
// another's; without it every client has the proxy's address, and still
// the right token passes after ten wrong ones from that address.
func TestWrongTokensBehindAProxy(t *testing.T) {
	now := time.Unix(1e9, 0)
	trusted, _ := clientaddr.ParseTrusted("10.0.0.0/8")
	for _, tc := range []struct {
		name     string
		resolver *clientaddr.Resolver
		other    int // a wrong token of another client after the attacker's
	}{
		{"trusted proxy", clientaddr.New(trusted), http.StatusUnauthorized},
		{"untrusted proxy", clientaddr.New(nil), http.StatusTooManyRequests},
	} {
		api := admin.New(admin.Options{Cluster: &resultCluster{}, Token: "right", Now: func() time.Time { return now }})
		mux := http.NewServeMux()
		api.Register(mux)
		h := tc.resolver.Wrap(mux)
		send := func(client, auth string) int {
			req := httptest.NewRequest("GET", "/admin/v1/cluster", nil)
			req.RemoteAddr = "10.0.0.1:4000"                      // the load balancer
			req.Header.Set("X-Forwarded-For", "6.6.6.6, "+client) // a spoofed hop first
			req.Header.Set("Authorization", auth)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			return w.Code
		}
		for range 10 {
			send("192.0.2.7", "Bearer guess")
		}
		if code := send("192.0.2.7", "Bearer guess"); code != http.StatusTooManyRequests {
			t.Fatalf("%s: 11th wrong token: %d", tc.name, code)
		}
		if code := send("198.51.100.1", "Bearer guess"); code != tc.other {
			t.Fatalf("%s: another client's wrong token: %d, want %d", tc.name, code, tc.other)
		}
		for _, client := range []string{"192.0.2.7", "198.51.100.1"} {
			if code := send(client, "Bearer right"); code != http.StatusOK {
				t.Fatalf("%s: the right token from %s: %d", tc.name, client, code)
			}
		}
	}
}
