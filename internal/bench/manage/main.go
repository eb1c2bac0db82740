// Command manage measures the Management API on a dev node: apply a bundle
// of 10,000 monitors (created, then unchanged, then 1% changed), list them,
// export them, and print the time of each step.
//
//	go run ./internal/bench/manage -lookout bin/lookout -monitors 10000
//
// It is what `make bench-manage` runs. A benchmark, not a test: it prints
// figures and asserts nothing.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"time"

	"lookout/internal/bench"
)

func main() {
	binary := flag.String("lookout", "bin/lookout", "the lookout binary")
	n := flag.Int("monitors", 10000, "monitors in the bundle")
	runs := flag.Int("runs", 3, "repetitions of the read steps (the best is printed)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *binary, *n, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench manage:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, binary string, n, runs int) error {
	cl, err := bench.StartCluster(ctx, binary, 1)
	if err != nil {
		return err
	}
	defer cl.Stop()
	accts, err := cl.MakeAccounts(ctx, 1)
	if err != nil {
		return err
	}
	c := &caller{base: "http://" + cl.URLs[0], key: accts[0].ManagementKey}
	fmt.Printf("lookout: 1 dev node, a bundle of %d monitors (half ping, half http_check)\n", n)
	fmt.Printf("%-40s %12s\n", "step", "time")
	step := func(name string, fn func() error) error {
		start := time.Now()
		if err := fn(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Printf("%-40s %12s\n", name, time.Since(start).Round(time.Millisecond))
		return nil
	}
	b0, b1 := bundle(n, 0), bundle(n, n/100)
	// One apply changes at most 1,000 monitors (state.MaxPutMonitors): the
	// bundle is created in parts, each a longer prefix of it.
	const part = 1000
	createAll := func() error {
		for done := 0; done < n; {
			k := min(done+part, n)
			if err := c.apply(bundle(k, 0), "create", k-done); err != nil {
				return err
			}
			done = k
		}
		return nil
	}
	if err := step(fmt.Sprintf("apply: create all (%d applies)", (n+part-1)/part), createAll); err != nil {
		return err
	}
	for i := 0; i < runs; i++ {
		if err := step("apply: all unchanged", func() error { return c.apply(b0, "unchanged", n) }); err != nil {
			return err
		}
	}
	if err := step("apply: 1% changed", func() error { return c.apply(b1, "update", n/100) }); err != nil {
		return err
	}
	for i := 0; i < runs; i++ {
		if err := step("list (GET /monitors)", func() error { return c.get("/api/v1/monitors", "monitors", n) }); err != nil {
			return err
		}
	}
	for i := 0; i < runs; i++ {
		if err := step("export (GET /monitors/export)", func() error { return c.get("/api/v1/monitors/export", "monitors", n) }); err != nil {
			return err
		}
	}
	return nil
}

// bundle is n monitors; the first changed of them differ in timeout or URL.
func bundle(n, changed int) []byte {
	ms := make([]map[string]any, n)
	for i := range ms {
		timeout, url := 600, fmt.Sprintf("https://svc-%d.example.com/health", i)
		if i < changed {
			timeout, url = 900, url+"?v=2"
		}
		if i%2 == 0 {
			ms[i] = map[string]any{"kind": "ping", "name": fmt.Sprintf("job-%05d", i), "timeout_seconds": timeout, "tags": []string{"bench"}}
		} else {
			ms[i] = map[string]any{"kind": "http_check", "name": fmt.Sprintf("site-%05d", i), "schedule": "5m",
				"config": map[string]any{"url": url, "expected_status": 200}}
		}
	}
	b, _ := json.Marshal(map[string]any{"manifest_version": 1, "monitors": ms})
	return b
}

type caller struct{ base, key string }

func (c *caller) do(method, path string, body []byte) (map[string]any, error) {
	req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %d %.300s", method, path, resp.StatusCode, raw)
	}
	var out map[string]any
	return out, json.Unmarshal(raw, &out)
}

// apply posts the bundle and checks the report's count of action.
func (c *caller) apply(b []byte, action string, want int) error {
	rep, err := c.do("POST", "/api/v1/monitors/apply", b)
	if err != nil {
		return err
	}
	if got := rep["summary"].(map[string]any)[action].(float64); int(got) != want {
		return fmt.Errorf("report: %s %v, want %d", action, got, want)
	}
	return nil
}

// get reads path and checks the length of its list field.
func (c *caller) get(path, field string, want int) error {
	out, err := c.do("GET", path, nil)
	if err != nil {
		return err
	}
	if got := len(out[field].([]any)); got != want {
		return fmt.Errorf("%d %s, want %d", got, field, want)
	}
	return nil
}
