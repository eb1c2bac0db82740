package httpserver_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"lookout/internal/httpserver"
)

// An answer that is not written within WriteTimeout of its request is
// cut off (the client gets no answer), except for the requests exempt
// from it: RPC paths and those NoWriteTimeout picks (streams, snapshots).
func TestWriteTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 100 * time.Millisecond
	srv := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(4 * timeout) // the answer comes after the write deadline
		io.WriteString(w, "late")
	}), httpserver.Options{
		WriteTimeout:   timeout,
		RPCPrefixes:    []string{"/rpc/"},
		NoWriteTimeout: func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/stream") },
	})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	for _, tc := range []struct {
		path     string
		answered bool
	}{
		{"/api", false},
		{"/stream/live", true},
		{"/rpc/x", true},
		{"/api", false}, // a kept-alive connection gets the deadline again
	} {
		res, err := http.Get("http://" + ln.Addr().String() + tc.path)
		var body []byte
		if err == nil {
			body, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		if got := err == nil && string(body) == "late"; got != tc.answered {
			t.Errorf("%s: answered %v (%q, %v), want %v", tc.path, got, body, err, tc.answered)
		}
	}
}
