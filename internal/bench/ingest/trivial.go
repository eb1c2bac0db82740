package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"time"

	"lookout/internal/bench"
)

// serveTrivial is the baseline: a handler that reads and decodes the same
// JSON body and answers {"status":"success"}, nothing else. It runs in its
// own process, like lookout does.
func serveTrivial(addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /ping", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
			http.Error(w, `{"error":"invalid JSON"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"success"}`)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type trivialServer struct {
	cmd *exec.Cmd
	url string
}

// startTrivial runs this program again as the trivial server.
func startTrivial(ctx context.Context) (*trivialServer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr := bench.FreeAddr()
	cmd := exec.CommandContext(ctx, self, "-serve-trivial", addr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t := &trivialServer{cmd: cmd, url: addr}
	for i := 0; i < 100; i++ {
		if resp, err := http.Get("http://" + addr + "/health"); err == nil {
			resp.Body.Close()
			return t, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.stop()
	return nil, fmt.Errorf("trivial server did not start")
}

func (t *trivialServer) stop() {
	t.cmd.Process.Kill()
	t.cmd.Wait()
}
