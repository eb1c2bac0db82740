package metrics

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Wrong metrics tokens are throttled per client address like wrong
// operator tokens; the right token always passes.
func TestMetricsTokenThrottle(t *testing.T) {
	now := time.Unix(1e9, 0)
	h := Handler(prometheus.NewRegistry(), HandlerOptions{Token: "mtok", Now: func() time.Time { return now }})
	get := func(addr, auth string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/metrics", nil)
		r.RemoteAddr = addr
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	guesser, scraper := "192.0.2.7:1000", "198.51.100.1:1000"
	for i := range 10 {
		if w := get(guesser, "Bearer guess"); w.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d", i, w.Code)
		}
	}
	w := get(guesser, "Bearer guess")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("11th wrong token: %d %v", w.Code, w.Header())
	}
	if w := get(guesser, ""); w.Code != http.StatusTooManyRequests {
		t.Fatalf("no token from a throttled address: %d", w.Code)
	}
	if w := get(guesser, "Bearer mtok"); w.Code != http.StatusOK {
		t.Fatalf("the right token from a throttled address: %d", w.Code)
	}
	if w := get(scraper, "Bearer guess"); w.Code != http.StatusUnauthorized {
		t.Fatalf("another address's wrong token: %d", w.Code)
	}
	now = now.Add(time.Second)
	if w := get(guesser, "Bearer guess"); w.Code != http.StatusUnauthorized {
		t.Fatalf("a second later: %d", w.Code)
	}
}

// Without a token nothing is asked.
func TestMetricsWithoutToken(t *testing.T) {
	h := Handler(prometheus.NewRegistry(), HandlerOptions{})
	for range 20 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		if w.Code != http.StatusOK {
			t.Fatalf("%d", w.Code)
		}
	}
}
