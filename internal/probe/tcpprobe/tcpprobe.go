// Package tcpprobe is the probe of a tcp_check: a TCP connection to the
// check's host and port within its timeout; then, when the check says so,
// its send text written and its expect text awaited in the first MaxRead
// bytes of the answer.
package tcpprobe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"lookout/internal/jsonpath"
	"lookout/internal/probe"
)

// MaxRead is how much of the answer the expected text is searched in.
const MaxRead = 64 << 10

// Prober probes tcp_checks. It is safe for concurrent use.
type Prober struct {
	opts probe.Options
}

var _ probe.Prober = (*Prober)(nil)

// New returns a Prober with the given options.
func New(opts probe.Options) *Prober {
	return &Prober{opts: opts}
}

// Probe makes one attempt of the tcp_check t. The connection is closed
// when the attempt's timeout passes or ctx ends, so no read outlives it.
func (p *Prober) Probe(ctx context.Context, t probe.Target) (res probe.Result) {
	started := time.Now()
	defer func() { res.Duration = time.Since(started) }()
	timeout := t.EffectiveTimeout()
	attempt, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	if t.Host == "" || t.Port < 1 || t.Port > 65535 {
		res.Err = &probe.Error{Kind: probe.KindInvalidTarget, Message: fmt.Sprintf("cannot connect to host %q port %d", t.Host, t.Port)}
		return res
	}
	conn, err := p.opts.Dialer()(attempt, "tcp", net.JoinHostPort(t.Host, strconv.Itoa(t.Port)))
	if err != nil {
		res.Err = probe.Classify(ctx, err, timeout, p.opts.Clock()())
		return res
	}
	defer func() { _ = conn.Close() }()
	res.TCP = &probe.TCP{Connect: time.Since(started)}
	stop := context.AfterFunc(attempt, func() { _ = conn.Close() })
	defer stop()
	if deadline, ok := attempt.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}

	if t.Send != "" {
		if _, err := io.WriteString(conn, t.Send); err != nil {
			res.Err = p.classify(ctx, attempt, err, timeout)
			return res
		}
	}
	if t.Expect != "" {
		n, err := expect(conn, []byte(t.Expect))
		res.TCP.Read = n
		if err != nil {
			res.Err = p.classify(ctx, attempt, err, timeout)
		}
	}
	return res
}

// errNotFound is an answer read in full (closed, or MaxRead long) without
// the expected text.
type errNotFound struct {
	read   int
	closed bool
	want   []byte
}

func (e *errNotFound) Error() string {
	want := jsonpath.Excerpt(strconv.Quote(string(e.want)))
	if e.closed {
		return fmt.Sprintf("the connection closed after %s bytes without %s", probe.Count(int64(e.read)), want)
	}
	return fmt.Sprintf("%s is not in the first %s bytes of the answer", want, probe.Count(MaxRead))
}

// expect reads from r until want appears, the answer ends, or MaxRead
// bytes came; it returns how many bytes it read.
func expect(r io.Reader, want []byte) (int, error) {
	buf := make([]byte, 0, 4096)
	for len(buf) < MaxRead {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), MaxRead)])
		buf = buf[:len(buf)+n]
		if bytes.Contains(buf, want) {
			return len(buf), nil
		}
		if errors.Is(err, io.EOF) {
			return len(buf), &errNotFound{read: len(buf), closed: true, want: want}
		}
		if err != nil {
			return len(buf), err
		}
	}
	return len(buf), &errNotFound{read: len(buf), want: want}
}

// classify names a failure after the connection was made: the expected
// text missing (not transient), or a network error or timeout.
func (p *Prober) classify(parent, attempt context.Context, err error, timeout time.Duration) *probe.Error {
	var nf *errNotFound
	if errors.As(err, &nf) {
		return &probe.Error{Kind: probe.KindExpect, Message: nf.Error()}
	}
	if parent.Err() == nil && attempt.Err() != nil {
		// The connection was closed by the attempt's end.
		err = context.DeadlineExceeded
	}
	return probe.Classify(parent, err, timeout, p.opts.Clock()())
}
