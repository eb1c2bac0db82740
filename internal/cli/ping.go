package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	randv2 "math/rand/v2"
	"os"
	"strings"
	"time"

	"lookout/internal/client"
)

const (
	// defaultRetryFor is how long ping and exec keep trying an event.
	defaultRetryFor = time.Minute
	// retryBase and retryMax bound the backoff between attempts.
	retryBase = 500 * time.Millisecond
	// firstNetRetry bounds the wait before the first retry of an attempt
	// that got no answer.
	firstNetRetry = 100 * time.Millisecond
	retryMax      = 10 * time.Second
	// ingestAttemptTimeout bounds one attempt to send an event.
	ingestAttemptTimeout = 10 * time.Second
)

// ingestEnv is what lookout ping and lookout exec take from the process;
// tests give their own.
type ingestEnv struct {
	getenv         func(string) string
	hostname       func() (string, error)
	stdin          io.Reader
	stdout, stderr io.Writer
	retry          retryPolicy
}

func processIngestEnv(getenv func(string) string, stdout, stderr io.Writer) ingestEnv {
	return ingestEnv{getenv: getenv, hostname: os.Hostname, stdin: os.Stdin, stdout: stdout, stderr: stderr, retry: defaultRetryPolicy()}
}

// retryPolicy is how an event is sent again after a retryable failure:
// backoff from base doubling up to max, each wait jittered, at least any
// Retry-After the service asked for, until the next attempt would start
// later than retryFor after the first.
type retryPolicy struct {
	base, max time.Duration
	jitter    func(time.Duration) time.Duration
	now       func() time.Time
	sleep     func(context.Context, time.Duration) error
}

func defaultRetryPolicy() retryPolicy {
	return retryPolicy{base: retryBase, max: retryMax, jitter: halfJitter, now: time.Now, sleep: sleepContext}
}

// halfJitter returns a random wait between d/2 and d.
func halfJitter(d time.Duration) time.Duration { return d/2 + randv2.N(d/2+1) }

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// send sends ev until it is accepted, refused for good, or retryFor has
// passed. ev.EventID must be set so that an attempt that reached the
// service unbeknown to us is not stored twice. onRetry, when not nil,
// hears of each retry.
func (p retryPolicy) send(ctx context.Context, ing *client.Ingest, ev client.Event, retryFor time.Duration, onRetry func(error, time.Duration)) (*client.PingResult, error) {
	deadline := p.now().Add(retryFor)
	backoff := p.base
	for attempt := 1; ; attempt++ {
		res, err := ing.Ping(ctx, ev)
		if err == nil || !client.Retryable(err) || ctx.Err() != nil {
			return res, err
		}
		wait := max(p.jitter(backoff), client.RetryAfter(err))
		if attempt == 1 && client.IsNetworkError(err) {
			// No answer at all (a node that just died, a connection
			// reset): behind a load balancer the next attempt reaches
			// another node, so it goes almost at once.
			wait = p.jitter(firstNetRetry)
		}
		if p.now().Add(wait).After(deadline) {
			return nil, fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		if onRetry != nil {
			onRetry(err, wait)
		}
		if p.sleep(ctx, wait) != nil {
			return nil, err
		}
		backoff = min(2*backoff, p.max)
	}
}

// ingestConn holds the flags that say where events go and how long to
// keep trying. Their environment variables are LOOKOUT_ADDR,
// LOOKOUT_INGEST_KEY and LOOKOUT_RETRY_FOR.
type ingestConn struct {
	addr, key, caFile string
	retryFor          time.Duration
}

func addIngestFlags(fs *flag.FlagSet) *ingestConn {
	c := &ingestConn{}
	fs.StringVar(&c.addr, "addr", defaultAdminAddr, "the Ingest API's URL (env LOOKOUT_ADDR)")
	fs.StringVar(&c.key, "ingest-key", "", "the account's ingest key, ck_... (env LOOKOUT_INGEST_KEY)")
	fs.DurationVar(&c.retryFor, "retry-for", defaultRetryFor, "keep retrying an event that failed for a passing reason this long")
	fs.StringVar(&c.caFile, "ca-file", "", "PEM CA certificate(s) to verify an https:// node with, instead of the system roots (env LOOKOUT_CA_FILE)")
	return c
}

// client returns the Ingest API client, or a usage error without a key.
func (c *ingestConn) client() (*client.Ingest, error) {
	if c.key == "" {
		return nil, usageError{"no ingest key: give --ingest-key or set LOOKOUT_INGEST_KEY"}
	}
	addr := c.addr
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	hc, err := httpClient(c.caFile, ingestAttemptTimeout)
	if err != nil {
		return nil, err
	}
	return client.NewIngest(addr, c.key, hc), nil
}

// newID returns a random id for an event or a run.
func newID() string { return rand.Text() }

// hostOr returns host, or this host's name when host is empty.
func hostOr(host string, env ingestEnv) string {
	if host == "" {
		host, _ = env.hostname()
	}
	return host
}

const pingUsage = `Usage: lookout ping MONITOR --status run|complete|fail|skip [flags]

Send one event to the Ingest API. Failures that may pass (no answer, 429,
502, 503, 504) are retried with backoff for --retry-for; the event carries a
random event_id so that retries never store it twice. On success it prints
one line ("ok: MONITOR STATUS"; nothing with -q), and says so when the ping
created its monitor: a name the account did not have, perhaps mistyped.
-v prints each request and its answer, with the X-Quota-* headers, to
stderr. Every flag also reads LOOKOUT_<FLAG>.

Flags:
`

// runPing runs lookout ping with the process environment.
func runPing(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runPingEnv(ctx, args, processIngestEnv(getenv, stdout, stderr))
}

func runPingEnv(ctx context.Context, args []string, env ingestEnv) error {
	fs := newAdminFlagSet("lookout ping")
	conn := addIngestFlags(fs)
	ev := client.Event{}
	fs.StringVar(&ev.Status, "status", "", "run, complete, fail or skip (required for --event-type ping)")
	duration := fs.Float64("duration", 0, "execution time in seconds")
	exitCode := fs.Int("exit-code", 0, "the job's exit code")
	fs.StringVar(&ev.Message, "message", "", "free-form message or log excerpt")
	fs.StringVar(&ev.Host, "host", "", "host that ran the job (default: this host's name)")
	fs.StringVar(&ev.Project, "project", "", "project to group the monitor under")
	fs.StringVar(&ev.Series, "series", "", "run id pairing a run with its complete or fail")
	fs.StringVar(&ev.EventType, "event-type", "ping", "ping, stream_event or a custom type")
	fs.StringVar(&ev.State, "state", "", "state of a stream_event (required for --event-type stream_event)")
	var verbose, quiet bool
	fs.BoolVar(&verbose, "verbose", false, "print each request, its answer with the quota headers, and each retry to stderr")
	fs.BoolVar(&verbose, "v", false, "short for --verbose")
	fs.BoolVar(&quiet, "quiet", false, "print nothing on success (a created monitor is still told, on stderr)")
	fs.BoolVar(&quiet, "q", false, "short for --quiet")
	if err := parseWithEnv(fs, nil, env.getenv); err != nil {
		return usageError{fmt.Sprintf("ping: %v", err)}
	}
	positional, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(env.stdout, pingUsage)
		return printDefaults(env.stdout, fs)
	}
	if err != nil {
		return usageError{fmt.Sprintf("ping: %v (see lookout ping -h)", err)}
	}
	if len(positional) != 1 {
		return usageError{fmt.Sprintf("ping: want one MONITOR, got %q (see lookout ping -h)", positional)}
	}
	ev.Monitor = positional[0]
	switch ev.EventType {
	case "ping":
		switch ev.Status {
		case "run", "complete", "fail", "skip":
		case "":
			return usageError{"ping: --status is required (run, complete, fail or skip)"}
		default:
			return usageError{fmt.Sprintf("ping: --status %q: want run, complete, fail or skip", ev.Status)}
		}
	case "stream_event":
		if ev.State == "" {
			return usageError{"ping: --state is required for --event-type stream_event"}
		}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "duration":
			ev.Duration = duration
		case "exit-code":
			ev.ExitCode = exitCode
		}
	})
	ing, err := conn.client()
	if err != nil {
		return err
	}
	ev.Host = hostOr(ev.Host, env)
	ev.Timestamp = new(time.Now().Unix())
	ev.EventID = newID()

	var onRetry func(error, time.Duration)
	if verbose {
		ing.SetTrace(func(x client.Exchange) { printExchange(env.stderr, x) })
		onRetry = func(err error, wait time.Duration) {
			fmt.Fprintf(env.stderr, "lookout ping: %v; retrying in %s\n", err, wait.Round(time.Millisecond))
		}
	}
	res, err := env.retry.send(ctx, ing, ev, conn.retryFor, onRetry)
	if err != nil {
		return fmt.Errorf("ping %s: %w", ev.Monitor, err)
	}
	if res.Suspended {
		fmt.Fprintf(env.stderr, "lookout ping: the account is suspended, the event was not stored: %s\n", describeQuota(res))
		return nil
	}
	out := env.stdout
	if quiet {
		out = env.stderr
	} else {
		fmt.Fprintf(out, "ok: %s %s\n", ev.Monitor, describeEvent(ev))
	}
	if res.Created {
		fmt.Fprintf(out, "created monitor %s: a new name; was it mistyped? (lookout monitors list shows the account's monitors)\n", ev.Monitor)
	}
	return nil
}

// describeEvent names what an event reported: its status, a stream
// event's state, or a custom type.
func describeEvent(ev client.Event) string {
	switch ev.EventType {
	case "ping":
		return ev.Status
	case "stream_event":
		return "stream_event " + ev.State
	}
	return ev.EventType
}

// printExchange prints a request and its answer as lookout ping -v shows
// them: > for what was sent, < for what came back. The key is not shown.
func printExchange(w io.Writer, x client.Exchange) {
	fmt.Fprintf(w, "> %s %s\n> %s\n", x.Method, x.URL, x.RequestBody)
	if x.Status == "" {
		fmt.Fprintf(w, "< no answer: %v\n", x.Err)
		return
	}
	fmt.Fprintf(w, "< %s\n", x.Status)
	for _, h := range []string{"Content-Type", "Retry-After", "X-Quota-State", "X-Quota-Limit", "X-Quota-Used", "X-Quota-Reset", "X-Quota-Reset-In"} {
		if v := x.Header.Get(h); v != "" {
			fmt.Fprintf(w, "< %s: %s\n", h, v)
		}
	}
	fmt.Fprintf(w, "< %s\n", strings.TrimRight(string(x.Body), "\n"))
}

// describeQuota says the quota state of an answer in one line.
func describeQuota(res *client.PingResult) string {
	q := res.Quota
	s := q.State
	if q.Used != nil {
		if q.Limit != nil {
			s += fmt.Sprintf(", %d of %d events used", *q.Used, *q.Limit)
		} else {
			s += fmt.Sprintf(", %d events used", *q.Used)
		}
	}
	if !q.Reset.IsZero() {
		s += ", resets " + q.Reset.UTC().Format(time.RFC3339)
	}
	if res.Message != "" {
		s += " (" + res.Message + ")"
	}
	return s
}
