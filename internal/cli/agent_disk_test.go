package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookout/agent"
	"lookout/agent/agenttest"
	"lookout/agent/assign"
	"lookout/internal/apikey"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestAgentDataDirRemoved runs the agent with its real buffer and local
// ingest, and removes its whole data dir while it holds pings it could
// not forward yet (the control plane fails every call). No ping is
// answered 200 without being stored: every ping answered 200 reaches the
// control plane once it answers again, after a restart of the agent,
// those buffered before the removal too (the buffer moved them into a new
// directory), and a ping answered 503 is not stored. The agent writes its
// id (the same) and its assignments again, and accepts pings again.
func TestAgentDataDirRemoved(t *testing.T) {
	secret, hash, err := apikey.New(apikey.Ingest)
	if err != nil {
		t.Fatal(err)
	}
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.PutKey(&agentv1.IngestKey{Id: "k1", Hash: hash, AccountId: "acc1",
		Plan: &raftv1.Plan{IngestRatePerSecond: 1000, IngestBurst: 10000}})
	cp.FailCalls(1 << 30)
	dir := filepath.Join(t.TempDir(), "data")
	cfg, err := parseAgent([]string{"--control", cp.URL(), "--token", "at_ok", "--region", "eu-1", "--data-dir", dir,
		"--name", "edge-t", "--http-addr", "127.0.0.1:0", "--log-level", "error"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var addr string
	start := func() (stop func() error) {
		ctx, cancel := context.WithCancel(context.Background())
		addrc, done := make(chan string, 1), make(chan error, 1)
		go func() { done <- serveAgent(ctx, cfg, openAgentLocal, io.Discard, func(a string) { addrc <- a }) }()
		select {
		case addr = <-addrc:
		case err := <-done:
			t.Fatalf("the agent stopped: %v", err)
		}
		stopped := false
		stop = func() error {
			if stopped {
				return nil
			}
			stopped = true
			cancel()
			return <-done
		}
		t.Cleanup(func() { stop() })
		return stop
	}
	stop := start()
	ping := func(id string) int {
		req, _ := http.NewRequest("POST", "http://"+addr+"/ping", strings.NewReader(`{"event_type":"ping","monitor":"backup","status":"run"}`))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Idempotency-Key", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("the key", func() bool { return ping("first") == 200 })
	stored := map[string]bool{"first": true}
	for i := range 20 {
		id := fmt.Sprint("before-", i)
		if code := ping(id); code != 200 {
			t.Fatalf("ping %s: %d", id, code)
		}
		stored[id] = true
	}
	id, err := agent.LoadID(dir)
	if err != nil {
		t.Fatal(err)
	}

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	refused := map[string]bool{}
	for i := range 20 {
		id := fmt.Sprint("during-", i)
		switch code := ping(id); code {
		case 200:
			stored[id] = true
		case 503:
			refused[id] = true
		default:
			t.Fatalf("ping %s: %d", id, code)
		}
	}
	t.Logf("%d pings answered 503 while the buffer recovered", len(refused))
	waitFor("the id and assignments written again", func() bool {
		got, err := os.ReadFile(filepath.Join(dir, agent.IDFile))
		_, serr := os.Stat(filepath.Join(dir, assign.FileName))
		return err == nil && strings.TrimSpace(string(got)) == id && serr == nil
	})
	waitFor("a ping accepted again", func() bool { return ping("after") == 200 })
	stored["after"] = true

	// Restarted, the agent finds everything in its data dir; then the
	// control plane answers again.
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	start()
	if got, err := agent.LoadID(dir); err != nil || got != id {
		t.Fatalf("id after a restart %q, %v", got, err)
	}
	cp.FailCalls(0)
	waitFor("every ping answered 200 at the control plane", func() bool {
		got := map[string]bool{}
		for _, ev := range cp.Events() {
			got[ev.GetEventId()] = true
		}
		for id := range stored {
			if !got[id] {
				return false
			}
		}
		return true
	})
	for _, ev := range cp.Events() {
		if refused[ev.GetEventId()] {
			t.Fatalf("ping %s was answered 503 and stored", ev.GetEventId())
		}
	}
}
