package panel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/state"
	"lookout/internal/metrics"
)

// Live updates: every node watches its own copy of the state through a
// change feed (state.Feed), which names the monitors each applied entry
// changed. The hub wakes the streams of those monitors (a monitor's page)
// and of their accounts (the list); each stream then reads what is new
// from the state itself, so a missed wake-up loses nothing and a
// reconnecting browser resumes after the Last-Event-ID it saw.

// keepalive is how often an idle stream sends a comment (and a status,
// whose relative times have moved), so proxies keep it open and a gone
// browser is noticed.
const keepalive = 15 * time.Second

// hub fans the change feed out to the open streams. It serves at most
// max streams, and at most share of one account's, so that one account
// opening many does not take every other account's place.
type hub struct {
	st    State
	max   int
	share int
	met   *metrics.Panel
	log   hclog.Logger
	done  chan struct{}

	mu        sync.Mutex
	subs      map[*sub]struct{}
	ofAccount map[string]int // open streams per account (those with any)
}

// sub is one open stream: of a monitor, or (monitor "") of an account's
// list.
type sub struct {
	account, monitor string
	ch               chan struct{}
}

func newHub(st State, max, share int, met *metrics.Panel, log hclog.Logger) *hub {
	return &hub{st: st, max: max, share: share, met: met, log: log, done: make(chan struct{}), subs: map[*sub]struct{}{}, ofAccount: map[string]int{}}
}

// The refusals of subscribe.
var (
	errTooManyStreams   = errors.New("too many live streams on this node")
	errTooManyOfAccount = errors.New("too many live streams for this account on this node")
)

func (h *hub) subscribe(account, monitor string) (*sub, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.ofAccount[account] >= h.share:
		h.met.LiveRefused("account")
		return nil, errTooManyOfAccount
	case len(h.subs) >= h.max:
		h.met.LiveRefused("node")
		return nil, errTooManyStreams
	}
	s := &sub{account: account, monitor: monitor, ch: make(chan struct{}, 1)}
	h.subs[s] = struct{}{}
	h.ofAccount[account]++
	h.met.LiveStreams(len(h.subs))
	return s, nil
}

func (h *hub) unsubscribe(s *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	if h.ofAccount[s.account]--; h.ofAccount[s.account] <= 0 {
		delete(h.ofAccount, s.account)
	}
	h.met.LiveStreams(len(h.subs))
}

// refuse answers a stream subscribe refused (err): 503, and a retry later.
func refuse(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", "10")
	http.Error(w, err.Error(), http.StatusServiceUnavailable)
}

// run reads the change feed until ctx ends, then ends every stream.
func (h *hub) run(ctx context.Context) {
	feed := h.st.NewFeed()
	feed.Watch(true)
	defer feed.Watch(false)
	defer close(h.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-feed.Changed():
			monitors, overflow, _ := feed.TakeChanges()
			h.notify(monitors, overflow)
		}
	}
}

// notify wakes the streams of the changed monitors and of their accounts
// (all of them on overflow; the lists of every account for a monitor that
// is gone, whose account cannot be read any more).
func (h *hub) notify(monitors []string, all bool) {
	h.mu.Lock()
	subs := make([]*sub, 0, len(h.subs))
	lists := false
	for s := range h.subs {
		subs = append(subs, s)
		lists = lists || s.monitor == ""
	}
	h.mu.Unlock()
	if len(subs) == 0 {
		return
	}
	changed := make(map[string]bool, len(monitors))
	accounts := map[string]bool{}
	for _, id := range monitors {
		changed[id] = true
		if !lists || all {
			continue
		}
		if m, err := h.st.MonitorByUUID(id); err == nil {
			accounts[m.GetAccountId()] = true
		} else {
			all = true
		}
	}
	for _, s := range subs {
		if all || (s.monitor == "" && accounts[s.account]) || (s.monitor != "" && changed[s.monitor]) {
			select {
			case s.ch <- struct{}{}:
			default:
			}
		}
	}
}

// stream is an open text/event-stream answer.
type stream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// openStream starts an event stream: no read deadline (the server's
// ReadTimeout would otherwise end it), no caching or buffering.
func openStream(w http.ResponseWriter) *stream {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// Reconnect after 2 seconds when the connection drops.
	fmt.Fprint(w, "retry: 2000\n\n")
	return &stream{w: w, rc: rc}
}

// send writes one event; id 0 sends none. data is JSON, one line.
func (s *stream) send(event string, id uint64, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if id > 0 {
		fmt.Fprintf(s.w, "id: %d\n", id)
	}
	_, err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", event, b)
	return err
}

func (s *stream) comment() error {
	_, err := fmt.Fprint(s.w, ": keepalive\n\n")
	return err
}

func (s *stream) flush() error { return s.rc.Flush() }

// follow runs the stream of sub: update at once, then on every wake-up and
// keepalive, until the browser goes, the panel stops, or update fails.
func (p *Panel) follow(r *http.Request, st *stream, sb *sub, update func(tick bool) error) {
	defer p.hub.unsubscribe(sb)
	if update(false) != nil || st.flush() != nil {
		return
	}
	t := time.NewTicker(keepalive)
	defer t.Stop()
	for {
		tick := false
		select {
		case <-r.Context().Done():
			return
		case <-p.hub.done:
			return
		case <-sb.ch:
		case <-t.C:
			tick = true
			if st.comment() != nil {
				return
			}
		}
		if update(tick) != nil || st.flush() != nil {
			return
		}
	}
}

// liveEvent is the data of an "event" message: the rendered log row.
type liveEvent struct {
	Seq  uint64 `json:"seq"`
	HTML string `json:"html"`
}

// liveHTML is the data of "status" and "executions" messages.
type liveHTML struct {
	HTML string `json:"html"`
}

// handleMonitorLive serves GET /monitors/{uuid}/live, the monitor page's
// event stream: "event" messages (id: the event's seq) with each new log
// row, oldest first, from the Last-Event-ID header (a reconnect) or the
// next query (one past the newest seq the page was rendered with), each
// with id one past its seq; "status" with
// the monitor's status block; "executions" with a check's executions;
// "deleted" when the monitor is gone.
func (p *Panel) handleMonitorLive(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	m, ok := p.monitorOf(w, r)
	if !ok {
		return
	}
	// Event seqs start at 0: ids and the query carry the next seq wanted.
	from := r.Header.Get("Last-Event-ID")
	if from == "" {
		from = r.URL.Query().Get("next")
	}
	next, _ := strconv.ParseUint(from, 10, 64)
	sb, err := p.hub.subscribe(s.AccountID, m.GetUuid())
	if err != nil {
		refuse(w, err)
		return
	}
	st := openStream(w)
	id, isPing := m.GetUuid(), m.GetKind() == state.KindPing
	var lastExecs string
	p.follow(r, st, sb, func(tick bool) error {
		m, err := p.o.State.Monitor(s.AccountID, id)
		if errors.Is(err, state.ErrNotFound) {
			st.send("deleted", 0, struct{}{})
			return err
		}
		if err != nil {
			return err
		}
		nowMs := p.now().UnixMilli()
		if isPing && !tick {
			events, err := p.o.State.Events(s.AccountID, id, eventsShown)
			if err != nil {
				return err
			}
			for i := len(events) - 1; i >= 0; i-- {
				e := events[i]
				if e.GetSeq() < next {
					continue
				}
				html, err := p.renderFragment("monitor", "eventrow", toEventRow(e))
				if err != nil {
					return err
				}
				if err := st.send("event", e.GetSeq()+1, liveEvent{Seq: e.GetSeq(), HTML: html}); err != nil {
					return err
				}
				next = e.GetSeq() + 1
			}
		}
		if !isPing {
			html, err := p.execsHTML(s.AccountID, id)
			if err != nil {
				return err
			}
			if html != lastExecs {
				lastExecs = html
				if err := st.send("executions", 0, liveHTML{html}); err != nil {
					return err
				}
			}
		}
		html, err := p.renderFragment("monitor", "status", &monitorView{NowMs: nowMs, M: p.row(m, nowMs)})
		if err != nil {
			return err
		}
		return st.send("status", 0, liveHTML{html})
	})
}

func (p *Panel) execsHTML(accountID, id string) (string, error) {
	execs, err := p.o.State.Executions(accountID, id, eventsShown)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return "", err
	}
	v := &monitorView{NowMs: p.now().UnixMilli()}
	for _, e := range execs {
		v.Executions = append(v.Executions, toExecRow(e))
	}
	return p.renderFragment("monitor", "execrows", v)
}

// handleListLive serves GET /live, the list's stream: a "changed" message
// whenever a monitor of the account changed (the page then reloads its
// list), and on every keepalive (relative times move).
func (p *Panel) handleListLive(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	sb, err := p.hub.subscribe(s.AccountID, "")
	if err != nil {
		refuse(w, err)
		return
	}
	st := openStream(w)
	first := true
	p.follow(r, st, sb, func(bool) error {
		if first {
			first = false
			return nil
		}
		return st.send("changed", 0, struct{}{})
	})
}
