package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"

	"lookout/internal/bench"
)

// nodeFigures are one node's memory and disk at one moment.
type nodeFigures struct {
	mem  bench.Memory
	disk int64
	err  error
}

// measureNodes reads every running node's memory and data directory.
func measureNodes(cl *bench.Cluster, nodes int) []nodeFigures {
	out := make([]nodeFigures, nodes)
	for i := range out {
		f := &out[i]
		if f.mem, f.err = bench.ReadMemory(cl.Pid(i)); f.err == nil {
			f.disk, f.err = bench.DiskUsage(cl.DataDir(i))
		}
	}
	return out
}

// printNodes prints figures as one line per node.
func printNodes(what string, role func(int) string, figs []nodeFigures) {
	fmt.Printf("%s:\n", what)
	for i, f := range figs {
		if f.err != nil {
			fmt.Printf("  node %d: %v\n", i+1, f.err)
			continue
		}
		fmt.Printf("  node %d (%s): RSS %s (anon %s, file %s; peak %s), disk %s\n", i+1, role(i),
			bench.MiB(f.mem.RSS), bench.MiB(f.mem.Anon), bench.MiB(f.mem.File), bench.MiB(f.mem.Peak), bench.MiB(f.disk))
	}
}

// csrfRE finds the sign-in form's CSRF field.
var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// panelPage signs in to the panel at base (http://host:port) and times runs
// GETs of the monitor list's first page. It returns the times in the
// order taken and the size of the last page.
func panelPage(ctx context.Context, base, email, password string, runs int) ([]time.Duration, int, error) {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, []byte, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
	_, page, err := get("/login")
	if err != nil {
		return nil, 0, err
	}
	m := csrfRE.FindSubmatch(page)
	if m == nil {
		return nil, 0, fmt.Errorf("no csrf field in the sign-in page")
	}
	form := url.Values{"email": {email}, "password": {password}, "csrf": {string(m[1])}, "next": {"/"}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return nil, 0, fmt.Errorf("sign in: %s", resp.Status)
	}
	var times []time.Duration
	size := 0
	for range runs {
		start := time.Now()
		resp, b, err := get("/")
		if err != nil {
			return nil, 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, 0, fmt.Errorf("GET /: %s", resp.Status)
		}
		times = append(times, time.Since(start))
		size = len(b)
	}
	return times, size, nil
}

// applyChanged times applies of account a's whole bundle: unchanged, then
// with its first changed ping monitors changed. It returns both times.
func applyChanged(ctx context.Context, a *account, checkURL string, changed int) (unchanged, updated time.Duration, err error) {
	entries := a.bundle(checkURL, 0)
	start := time.Now()
	rep, err := apply(ctx, a.manage, entries)
	if err != nil {
		return 0, 0, err
	}
	unchanged = time.Since(start)
	if rep.Summary.Unchanged != len(entries) {
		return 0, 0, fmt.Errorf("unchanged apply: %+v", rep.Summary)
	}
	entries = a.bundle(checkURL, changed)
	start = time.Now()
	if rep, err = apply(ctx, a.manage, entries); err != nil {
		return 0, 0, err
	}
	updated = time.Since(start)
	if want := min(changed, a.jobs-a.due); rep.Summary.Update != want {
		return 0, 0, fmt.Errorf("changed apply: %+v, want %d updated", rep.Summary, want)
	}
	return unchanged, updated, nil
}
