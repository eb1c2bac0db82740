// Command target is the stand-in for a private endpoint in deploy/'s
// docker-compose.yml: an HTTP server the edge agents check. GET / answers
// 200 "ok"; GET /status/CODE answers CODE (to try a failing check).
// Built static (CGO_ENABLED=0) into a FROM-scratch image by
// `make image-target`.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "0.0.0.0:8081", "listen address")
	flag.Parse()
	srv := &http.Server{Addr: *addr, Handler: handler(), ReadHeaderTimeout: 10 * time.Second}
	log.Printf("target: listening on %s", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// handler answers 200 "ok" at /, and the code CODE at /status/CODE.
func handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.PathValue("code"))
		if err != nil || code < 200 || code > 599 {
			http.Error(w, "status must be 200 to 599", http.StatusBadRequest)
			return
		}
		w.WriteHeader(code)
		fmt.Fprintln(w, strings.ToLower(http.StatusText(code)))
	})
	return mux
}
