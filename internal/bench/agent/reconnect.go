package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"lookout/agent/buffer"
	raftv1 "lookout/internal/gen/lookout/raft/v1"

	"lookout/internal/bench"
	"lookout/internal/client"
)

// benchReconnect is part 2: c.events pings buffered by an agent that was
// cut off, drained end to end into a dev control node once the agent is
// started against it.
//
// It starts `lookout control --dev`, makes an account (a plan without
// ingest limits), an ingest key and an agent token through the operator
// API, fills the buffer of a new agent data dir directly with
// agent/buffer (the agent process is not running: this is what its local
// Ingest API would have stored while cut off, stamped the same way), then
// starts `lookout agent` on that data dir and polls its /metrics until the
// buffer is empty. The control node's usage count of the account must then
// be exactly c.events.
func benchReconnect(c config, root string) error {
	if c.lookout == "" {
		fmt.Println("\nreconnect: skipped (no -lookout binary)")
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cl, err := bench.StartCluster(ctx, c.lookout, 1)
	if err != nil {
		return err
	}
	defer cl.Stop()
	admin := cl.Admin(0)
	accts, err := cl.MakeAccounts(ctx, 1)
	if err != nil {
		return err
	}
	acct := accts[0]
	key, err := admin.CreateKey(ctx, acct.ID, client.CreateKeyRequest{Type: "ingest", Name: "agent-bench"})
	if err != nil {
		return fmt.Errorf("create ingest key: %w", err)
	}
	const region = "bench"
	tok, err := admin.CreateAgentToken(ctx, client.CreateAgentTokenRequest{Region: region, Name: "bench-agent"})
	if err != nil {
		return fmt.Errorf("create agent token: %w", err)
	}

	// The buffer, filled while no agent runs, as agent_local.go opens it.
	dataDir := filepath.Join(root, "reconnect-agent")
	bufDir := filepath.Join(dataDir, "buffer")
	b, err := buffer.Open(buffer.Options{Dir: bufDir, MaxBytes: c.maxBytes, Small: true})
	if err != nil {
		return err
	}
	fmt.Printf("\nreconnect (part 2): %d pings buffered while the agent was cut off, then `lookout agent` started against a dev control node\n", c.events)
	start := time.Now()
	n, err := fill(b, c.writers, c.events, acct.ID, key.ID)
	if err != nil {
		b.Close()
		return err
	}
	el := time.Since(start)
	s := b.Stats()
	if err := b.Close(); err != nil {
		return err
	}
	fmt.Printf("  fill (agent/buffer in this process, %d appenders, small options): %d events in %s = %.0f events/s; %d MiB counted, %d MiB on disk\n",
		c.writers, n, el.Round(time.Millisecond), float64(n)/el.Seconds(), s.Bytes>>20, dirSize(bufDir)>>20)

	// The agent, against the control node.
	httpAddr := bench.FreeAddr()
	args := []string{"agent", "--control", "http://" + cl.URLs[0], "--token", tok.Token, "--region", region,
		"--name", "bench-agent", "--data-dir", dataDir, "--http-addr", httpAddr, "--buffer-max-bytes", strconv.FormatInt(c.maxBytes, 10),
		"--log-level", "warn"}
	agentLog, err := os.Create(filepath.Join(root, "agent.log"))
	if err != nil {
		return err
	}
	defer agentLog.Close()
	cmd := exec.CommandContext(ctx, c.lookout, args...)
	cmd.Stdout, cmd.Stderr = agentLog, agentLog
	cmd.Env = append(os.Environ(), "LOOKOUT_TOKEN=", "LOOKOUT_CONTROL=")
	ctlCPU0 := cpuSeconds(cl.Pid(0))
	start = time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start agent: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		<-exited
	}()
	pid := cmd.Process.Pid

	var prof sync.WaitGroup
	if c.controlProfile != "" {
		prof.Go(func() { profileControl(ctx, cl.URLs[0], c.controlProfile) })
	}

	// Poll the agent's /metrics until its buffer is empty.
	var firstFwd, lastFwd time.Time
	var peakRSS int64
	lastPrint := time.Now()
	for {
		if time.Since(start) > 20*time.Minute {
			return fmt.Errorf("the buffer is not empty after 20 minutes (agent log %s)", agentLog.Name())
		}
		time.Sleep(100 * time.Millisecond)
		m, err := bench.Scrape(context.Background(), httpAddr, "")
		if err != nil {
			select {
			case <-exited:
				return fmt.Errorf("the agent exited: %s (log %s)", cmd.ProcessState, agentLog.Name())
			default:
			}
			continue // starting
		}
		peakRSS = max(peakRSS, statusKiB(pid, "VmRSS"))
		held, fwd := m[`lookout_agent_buffer_events`], m[`lookout_agent_forwarded_total{kind="event"}`]
		if fwd > 0 && firstFwd.IsZero() {
			firstFwd = time.Now()
		}
		if time.Since(lastPrint) >= 10*time.Second {
			fmt.Printf("    %5.0f s: %7.0f held, %7.0f forwarded, agent RSS %d MiB\n", time.Since(start).Seconds(), held, fwd, statusKiB(pid, "VmRSS")>>10)
			lastPrint = time.Now()
		}
		if held == 0 && fwd > 0 {
			lastFwd = time.Now()
			refused := 0.0
			for k, v := range m {
				if strings.HasPrefix(k, `lookout_agent_refused_total{kind="event"`) {
					refused += v
				}
			}
			total := lastFwd.Sub(start)
			drain := lastFwd.Sub(firstFwd)
			fmt.Printf("  drained: %.0f events forwarded and acknowledged (%.0f refused) in %s from the agent's start = %.0f events/s\n",
				fwd, refused, total.Round(time.Millisecond), fwd/total.Seconds())
			fmt.Printf("           the agent's start to its first forwarded batch %s (reopen, counting, connect); from there %s = %.0f events/s\n",
				firstFwd.Sub(start).Round(time.Millisecond), drain.Round(time.Millisecond), fwd/drain.Seconds())
			break
		}
	}
	fmt.Printf("  CPU during the drain: agent %.1f s, control node %.1f s (of %.1f s wall on 2 cores)\n",
		cpuSeconds(pid), cpuSeconds(cl.Pid(0))-ctlCPU0, lastFwd.Sub(start).Seconds())
	fmt.Printf("  agent RSS: peak %d MiB (VmHWM), highest seen while polling %d MiB, at the end %d MiB\n",
		statusKiB(pid, "VmHWM")>>10, peakRSS>>10, statusKiB(pid, "VmRSS")>>10)
	fmt.Printf("  control node RSS: peak %d MiB (VmHWM), at the end %d MiB\n",
		statusKiB(cl.Pid(0), "VmHWM")>>10, statusKiB(cl.Pid(0), "VmRSS")>>10)

	// Every event stored once: the account's usage count.
	acc, err := admin.GetAccount(ctx, acct.ID, false)
	if err != nil {
		return fmt.Errorf("read the account: %w", err)
	}
	got := acc.Usage.EventsThisPeriod
	fmt.Printf("  stored on the control node (the account's events_this_period): %d of %d\n", got, c.events)
	prof.Wait()
	if got != int64(c.events) {
		return fmt.Errorf("the control node counts %d events, want %d", got, c.events)
	}
	return nil
}

// fill appends n pings stamped as agent/ingest stamps them (account and
// key ids, receipt time, a UUID event_id) over 50 monitor names, from
// writers goroutines.
func fill(b *buffer.Buffer, writers, n int, accountID, keyID string) (int, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				ev := &raftv1.Event{
					EventType: "ping", Monitor: fmt.Sprintf("backup-%d", i%50), Status: "complete",
					Host: "db-1.internal", Duration: proto.Float64(12.5), ExitCode: proto.Int64(0),
					AccountId: accountID, KeyId: keyID, ReceivedUnixMs: time.Now().UnixMilli(), EventId: uuid.NewString(),
				}
				if err := b.AppendEvent(ev); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return n, nil
}

// profileControl writes a 20 s CPU profile of the control node, taken
// from 2 s into the drain.
func profileControl(ctx context.Context, addr, file string) {
	time.Sleep(2 * time.Second)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/admin/v1/debug/pprof/profile?seconds=20", nil)
	req.Header.Set("Authorization", "Bearer "+bench.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(resp.Status)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "control profile:", err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "control profile:", err)
		return
	}
	defer f.Close()
	io.Copy(f, resp.Body)
}

// statusKiB reads a kB field of /proc/<pid>/status (0 when unknown).
func statusKiB(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// cpuSeconds is the user and system CPU time of a process so far (from
// /proc/<pid>/stat, in clock ticks of 1/100 s).
func cpuSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// After the name: state is field 3, utime 14, stime 15.
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) / 100
}
