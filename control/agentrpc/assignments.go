package agentrpc

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sort"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"lookout/control/state"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
)

// maxItemsPerMessage bounds the checks plus keys of one stream message,
// so a large initial difference goes as several messages.
const maxItemsPerMessage = 500

// view is one reading of a region's assignments, by id.
type view struct {
	checks map[string]*agentv1.Check
	keys   map[string]*agentv1.IngestKey
}

// Assignments streams the assignments of the token: the checks of its
// region and the ingest keys of the accounts it serves. First the
// difference against what the agent holds (the last message with synced
// set; each of these messages names the region, the token's id and the
// region's gossip key), then each change as this node applies it, and an
// empty keepalive when nothing was sent for Keepalive. The token is
// checked again every Recheck; once it is revoked the stream ends
// UNAUTHENTICATED. Stop ends it UNAVAILABLE.
func (s *Service) Assignments(ctx context.Context, req *connect.Request[agentv1.AssignmentsRequest], stream *connect.ServerStream[agentv1.AssignmentsResponse]) error {
	t, hash, err := s.authenticate(ctx, req.Header())
	if err != nil {
		return err
	}
	region := t.GetRegion()
	if err := s.checkIdentity(region, req.Msg.GetAgent()); err != nil {
		return err
	}
	open := s.seen(t, req.Msg.GetAgent())
	open.Connected = true
	if err := s.presence.Seen(ctx, open); err != nil {
		s.log.Warn("record agent stream", "region", region, "error", err)
	}
	defer func() {
		if s.stopping() {
			// The node is going away and the agent is moving to another
			// node, which records it connected: a "closed" record now
			// could land after that one.
			return
		}
		closed := s.seen(t, req.Msg.GetAgent())
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.presence.Seen(pctx, closed); err != nil {
			s.log.Warn("record agent stream end", "region", region, "error", err)
		}
	}()

	// What the agent holds, as it says.
	held := view{checks: map[string]*agentv1.Check{}, keys: map[string]*agentv1.IngestKey{}}
	for _, h := range req.Msg.GetChecks() {
		held.checks[h.GetId()] = &agentv1.Check{Id: h.GetId(), Version: h.GetVersion()}
	}
	for _, h := range req.Msg.GetKeys() {
		held.keys[h.GetId()] = &agentv1.IngestKey{Id: h.GetId(), Version: h.GetVersion()}
	}

	cur, changed, err := s.read(region, t.GetAccounts())
	if err != nil {
		return err
	}
	head := &agentv1.AssignmentsResponse{Region: region, TokenId: t.GetId()}
	if s.gossipKey != nil {
		head.GossipKey = s.gossipKey(region)
	}
	if _, err := s.sendDiff(stream, held, cur, head); err != nil {
		return err
	}
	held = cur

	recheck := time.NewTicker(s.recheck)
	defer recheck.Stop()
	keepalive := time.NewTimer(s.keepalive)
	defer keepalive.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.stop:
			return connect.NewError(connect.CodeUnavailable, errors.New("the control node is shutting down"))
		case <-recheck.C:
			if err := s.stillValid(hash); err != nil {
				return err
			}
		case <-keepalive.C:
			if err := stream.Send(&agentv1.AssignmentsResponse{ServerUnixMs: s.now().UnixMilli()}); err != nil {
				return err
			}
			keepalive.Reset(s.keepalive)
		case <-changed:
			// Let a burst of changes (an apply of many monitors) land.
			select {
			case <-time.After(s.coalesce):
			case <-ctx.Done():
				return nil
			}
			next, ch, err := s.read(region, t.GetAccounts())
			if err != nil {
				return err
			}
			changed = ch
			sent, err := s.sendDiff(stream, held, next, nil)
			if err != nil {
				return err
			}
			held = next
			if sent {
				keepalive.Reset(s.keepalive)
			}
		}
	}
}

// cachedView is a scope's view and the AssignmentsChanged channel that
// was current before it was read: the view is current while that channel
// is open.
type cachedView struct {
	changed <-chan struct{}
	view    view
}

// viewScope names what the tokens of region that serve accounts see: the
// streams of one token, and of tokens alike, share their readings.
func viewScope(region string, accounts []string) string {
	return region + "\x00" + strings.Join(accounts, ",")
}

// read returns the assignments of the tokens of region that serve
// accounts, as the stream sends them, and the channel that closes when
// they may change. The streams of a scope share one reading per change
// (reading every monitor is what costs): a reading is kept while its
// channel is open, and streams that ask while one is under way wait for
// it (they get its channel: if it is already closed, they read again).
func (s *Service) read(region string, accounts []string) (view, <-chan struct{}, error) {
	scope := viewScope(region, accounts)
	changed := s.state.AssignmentsChanged()
	s.mu.Lock()
	c, ok := s.views[scope]
	s.mu.Unlock()
	if ok && c.changed == changed {
		return c.view, changed, nil
	}
	r, err, _ := s.flight.Do(scope, func() (any, error) {
		changed := s.state.AssignmentsChanged()
		v, err := s.readState(region, accounts)
		if err != nil {
			return nil, err
		}
		c := cachedView{changed: changed, view: v}
		s.mu.Lock()
		s.views[scope] = c
		s.mu.Unlock()
		return c, nil
	})
	if err != nil {
		return view{}, nil, err
	}
	c = r.(cachedView)
	return c.view, c.changed, nil
}

// readState reads the assignments of the tokens of region that serve
// accounts from the state. Each check names the tokens of the region
// whose agents may run it: those that serve its account.
func (s *Service) readState(region string, accounts []string) (view, error) {
	a, err := s.state.AgentAssignments(region, accounts)
	if err != nil {
		s.log.Error("read agent assignments", "region", region, "error", err)
		return view{}, connect.NewError(connect.CodeUnavailable, errors.New("cannot read the state"))
	}
	v := view{checks: make(map[string]*agentv1.Check, len(a.Checks)), keys: make(map[string]*agentv1.IngestKey, len(a.Keys))}
	servers := map[string][]string{} // token ids by account
	for _, m := range a.Checks {
		tokens, ok := servers[m.GetAccountId()]
		if !ok {
			for _, t := range a.Tokens {
				if state.ServesAccount(t, m.GetAccountId()) {
					tokens = append(tokens, t.GetId())
				}
			}
			servers[m.GetAccountId()] = tokens
		}
		c := &agentv1.Check{
			Id: m.GetUuid(), AccountId: m.GetAccountId(), Name: m.GetName(),
			Kind: m.GetKind(), Schedule: m.GetSchedule(), Timezone: m.GetTimezone(), Config: m.GetConfig(), Tokens: tokens,
		}
		c.Version = Version(c)
		v.checks[c.Id] = c
	}
	for _, k := range a.Keys {
		ik := &agentv1.IngestKey{Id: k.Key.GetId(), Hash: k.Key.GetHash(), AccountId: k.Key.GetAccountId(), Plan: k.Plan}
		ik.Version = Version(ik)
		v.keys[ik.Id] = ik
	}
	return v, nil
}

// sendDiff sends what turns held into cur: changed and new items whole,
// removed ones by id, in messages of at most maxItemsPerMessage items. On
// the initial difference (head set) at least one message is sent, the
// last with synced set, and each carries head's region, token id and
// gossip key; later (head nil), nothing is sent when nothing changed. It
// reports whether it sent anything.
func (s *Service) sendDiff(stream *connect.ServerStream[agentv1.AssignmentsResponse], held, cur view, head *agentv1.AssignmentsResponse) (sent bool, err error) {
	initial := head != nil
	var msgs []*agentv1.AssignmentsResponse
	msg := &agentv1.AssignmentsResponse{}
	items := 0
	add := func() {
		items++
		if items == maxItemsPerMessage {
			msgs = append(msgs, msg)
			msg, items = &agentv1.AssignmentsResponse{}, 0
		}
	}
	for _, id := range sortedKeys(cur.checks) {
		if h, ok := held.checks[id]; !ok || h.GetVersion() != cur.checks[id].GetVersion() {
			msg.Checks = append(msg.Checks, cur.checks[id])
			add()
		}
	}
	for _, id := range sortedKeys(held.checks) {
		if _, ok := cur.checks[id]; !ok {
			msg.RemovedChecks = append(msg.RemovedChecks, id)
			add()
		}
	}
	for _, id := range sortedKeys(cur.keys) {
		if h, ok := held.keys[id]; !ok || h.GetVersion() != cur.keys[id].GetVersion() {
			msg.Keys = append(msg.Keys, cur.keys[id])
			add()
		}
	}
	for _, id := range sortedKeys(held.keys) {
		if _, ok := cur.keys[id]; !ok {
			msg.RemovedKeys = append(msg.RemovedKeys, id)
			add()
		}
	}
	if items > 0 || (initial && len(msgs) == 0) {
		msgs = append(msgs, msg)
	}
	for i, m := range msgs {
		if initial {
			m.Region, m.TokenId, m.GossipKey = head.GetRegion(), head.GetTokenId(), head.GetGossipKey()
		}
		m.Synced = initial && i == len(msgs)-1
		m.ServerUnixMs = s.now().UnixMilli()
		if err := stream.Send(m); err != nil {
			return false, err
		}
	}
	return len(msgs) > 0, nil
}

// Version is the version of a Check or an IngestKey: the first 8 bytes of
// the SHA-256 of its deterministic encoding with the version field zero,
// so it changes whenever any other field does, and is the same on every
// node and in every release that encodes the message alike.
func Version(m interface {
	proto.Message
	GetVersion() uint64
}) uint64 {
	c := proto.Clone(m)
	switch v := c.(type) {
	case *agentv1.Check:
		v.Version = 0
	case *agentv1.IngestKey:
		v.Version = 0
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	if err != nil {
		panic("agentrpc: encode assignment: " + err.Error()) // only on a broken message type
	}
	sum := sha256.Sum256(b)
	return binary.BigEndian.Uint64(sum[:8])
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
