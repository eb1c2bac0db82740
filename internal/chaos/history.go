package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"lookout/internal/client"
	"lookout/internal/manifest"
)

// history records the Management API operations of every client with
// their call and answer times (nanoseconds since the run started, one
// monotonic clock).
type history struct {
	start time.Time

	mu     sync.Mutex
	ops    []porcupine.Operation
	counts map[string]int // "<op> <outcome>"
	uuids  map[string]string
}

func newHistory(start time.Time) *history {
	return &history{start: start, counts: map[string]int{}, uuids: map[string]string{}}
}

func (h *history) now() int64 { return int64(time.Since(h.start)) }

// unknownReturn marks an operation whose answer was lost until operations
// fixes its return time.
const unknownReturn = -1

func (h *history) add(op porcupine.Operation, outcome string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[op.Input.(mInput).Op+" "+outcome]++
	if outcome != "ok" && outcome != "unknown" {
		return
	}
	h.ops = append(h.ops, op)
	out := op.Output.(mOutput)
	if out.UUID != "" {
		h.uuids[op.Input.(mInput).Name] = out.UUID
	}
}

func (h *history) count(op, outcome string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[op+" "+outcome]++
}

// uuid is the last uuid seen for name ("" when none).
func (h *history) uuid(name string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.uuids[name]
}

// operations is the history for porcupine: operations whose answer was
// lost return after everything else.
func (h *history) operations() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	var end int64
	for _, op := range h.ops {
		end = max(end, op.Return, op.Call)
	}
	out := make([]porcupine.Operation, len(h.ops))
	for i, op := range h.ops {
		if op.Return == unknownReturn {
			op.Return = end + 1
		}
		out[i] = op
	}
	return out
}

// summary is the operation counts, sorted.
func (h *history) summary() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for k, v := range h.counts {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(out)
	return out
}

// manageClient is one client of the history: it sends one operation at a
// time, to a random node, on a random monitor of names.
type manageClient struct {
	id    int
	keys  []string // management keys, used in turn (the rate limit is per key and node)
	urls  []string
	names []string
	hist  *history
	httpc *http.Client
	rng   *rand.Rand
	seq   int
	// proc is the porcupine client id of the next operation: id, then
	// id + n*clients after each operation whose outcome is unknown (that
	// one never ends, as a hung process in Jepsen), so each id's
	// operations stay sequential in the visualization.
	proc, clients int
}

// run sends operations until ctx ends.
func (c *manageClient) run(ctx context.Context) {
	for ctx.Err() == nil {
		c.seq++
		c.one(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(50+c.rng.IntN(200)) * time.Millisecond):
		}
	}
}

// one sends one operation and records it.
func (c *manageClient) one(ctx context.Context) {
	url := c.urls[c.rng.IntN(len(c.urls))]
	m := client.NewManage(url, c.keys[c.seq%len(c.keys)], c.httpc)
	name := c.names[c.rng.IntN(len(c.names))]
	value := fmt.Sprintf("c%d-%d", c.id, c.seq)
	uuid := c.hist.uuid(name)
	var op string
	switch r := c.rng.IntN(100); {
	case r < 25:
		c.list(ctx, m)
		return
	case r < 45 || uuid == "":
		op = opApply
	case r < 65:
		op = opPut
	case r < 75:
		op = opDelete
	default:
		op = opGet
	}
	in := mInput{Op: op, Name: name}
	switch op {
	case opApply:
		in.Value = value
	case opPut:
		in.UUID, in.Value = uuid, value
	default:
		in.UUID = uuid
	}
	call := c.hist.now()
	out, err := c.send(ctx, m, in)
	ret := c.hist.now()
	outcome := classify(err)
	if outcome == "notfound" {
		outcome, out = "ok", mOutput{Found: false}
	}
	if outcome == "unknown" {
		if op == opGet {
			c.hist.count(op, "unknown")
			return // a read that got no answer changes nothing
		}
		out, ret = mOutput{Unknown: true}, unknownReturn
	}
	c.hist.add(porcupine.Operation{ClientId: c.proc, Input: in, Call: call, Output: out, Return: ret}, outcome)
	if outcome == "unknown" {
		c.proc += c.clients
	}
}

// send performs a write or a get.
func (c *manageClient) send(ctx context.Context, m *client.Manage, in mInput) (mOutput, error) {
	mf := manifest.Manifest{Kind: manifest.KindPing, Name: in.Name, Enabled: true, TimeoutSeconds: 60, DisplayName: in.Value}
	switch in.Op {
	case opApply:
		rep, err := m.ApplyBundle(ctx, manifest.Bundle{Monitors: []manifest.Manifest{mf}}, false)
		if err != nil {
			return mOutput{}, err
		}
		if len(rep.Changes) == 0 {
			return mOutput{Action: "unchanged"}, nil
		}
		return mOutput{Action: rep.Changes[0].Action, UUID: rep.Changes[0].UUID}, nil
	case opPut:
		got, err := m.ReplaceMonitor(ctx, in.UUID, mf)
		if err != nil {
			return mOutput{}, err
		}
		return mOutput{Found: true, UUID: got.UUID, Value: got.DisplayName}, nil
	case opDelete:
		if err := m.DeleteMonitor(ctx, in.UUID); err != nil {
			return mOutput{}, err
		}
		return mOutput{Found: true}, nil
	default: // opGet
		got, err := m.GetMonitor(ctx, in.UUID)
		if err != nil {
			return mOutput{}, err
		}
		return mOutput{Found: true, UUID: got.UUID, Value: got.DisplayName}, nil
	}
}

// list reads every monitor at once and records one read per name.
func (c *manageClient) list(ctx context.Context, m *client.Manage) {
	call := c.hist.now()
	page, err := m.ListMonitors(ctx, client.ListOptions{Kind: manifest.KindPing})
	ret := c.hist.now()
	outcome := classify(err)
	if outcome != "ok" {
		c.hist.count(opRead, outcome)
		return
	}
	seen := map[string]manifest.Manifest{}
	for _, mf := range page.Monitors {
		seen[mf.Name] = mf
	}
	for _, name := range c.names {
		out := mOutput{}
		if mf, ok := seen[name]; ok {
			out = mOutput{Found: true, UUID: mf.UUID, Value: mf.DisplayName}
		}
		c.hist.add(porcupine.Operation{ClientId: c.proc, Input: mInput{Op: opRead, Name: name}, Call: call, Output: out, Return: ret}, "ok")
	}
}

// classify names the outcome of a request: ok; notfound (a 404, which
// is an answer); unknown (no answer, or a 5xx: the write may or may not
// have been committed); refused (the node did not send it: connection
// refused); ratelimited (429, nothing done); or http<status> for other
// answers, which change nothing.
func classify(err error) string {
	if err == nil {
		return "ok"
	}
	var ae *client.APIError
	if errors.As(err, &ae) {
		switch {
		case ae.Status == http.StatusNotFound:
			return "notfound"
		case ae.Status == http.StatusTooManyRequests:
			return "ratelimited"
		case ae.Status >= 500:
			return "unknown"
		}
		return fmt.Sprintf("http%d", ae.Status)
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return "refused"
	}
	return "unknown"
}
