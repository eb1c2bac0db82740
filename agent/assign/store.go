// Package assign keeps the agent's assignments: the checks of its region
// and the ingest keys it may accept pings with, as the control plane's
// stream last gave them, with the region's gossip key and the token's id. The set is kept on disk (one file, replaced
// atomically after every change), so an agent restarted while cut off
// keeps probing and accepting pings with its last keys. Watcher follows
// the stream.
package assign

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"lookout/agent/atomicfile"

	agentv1 "lookout/internal/gen/lookout/agent/v1"
)

// FileName is the assignments file in the data dir.
const FileName = "assignments.pb"

// Store holds the assignments in memory and on disk. Safe for concurrent
// use.
type Store struct {
	path string

	mu        sync.RWMutex
	region    string
	gossipKey []byte
	tokenID   string
	checks    map[string]*agentv1.Check
	keys      map[string]*agentv1.IngestKey // by id
	byHash    map[string]*agentv1.IngestKey
	savedMs   int64 // server clock of the last applied change
	changed   chan struct{}
	dropped   error // why Open dropped the file, if it did
}

// Dropped returns why Open dropped a damaged assignments file (nil when
// it did not): the agent logs it.
func (s *Store) Dropped() error { return s.dropped }

// Open reads the assignments file of dir (an empty set when there is
// none). A file that cannot be read is an error. A file that cannot be
// decoded (damaged) is removed and the store starts empty: it is only a
// cache of what the control plane assigns, and the stream sends the whole
// set again when the agent holds nothing; Dropped tells why.
func Open(dir string) (*Store, error) {
	s := &Store{
		path:    filepath.Join(dir, FileName),
		checks:  map[string]*agentv1.Check{},
		keys:    map[string]*agentv1.IngestKey{},
		byHash:  map[string]*agentv1.IngestKey{},
		changed: make(chan struct{}, 1),
	}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the last assignments: %w", err)
	}
	var saved agentv1.AssignmentsResponse
	if err := proto.Unmarshal(b, &saved); err != nil {
		s.dropped = fmt.Errorf("%s is damaged (%w): removed; the control plane sends the assignments again", s.path, err)
		if err := os.Remove(s.path); err != nil {
			return nil, fmt.Errorf("remove the damaged %s: %w", s.path, err)
		}
		return s, nil
	}
	s.region, s.savedMs = saved.GetRegion(), saved.GetServerUnixMs()
	s.gossipKey, s.tokenID = saved.GetGossipKey(), saved.GetTokenId()
	for _, c := range saved.GetChecks() {
		s.checks[c.GetId()] = c
	}
	for _, k := range saved.GetKeys() {
		s.putKey(k)
	}
	return s, nil
}

// Region returns the region the control plane named (empty before the
// first message ever).
func (s *Store) Region() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.region
}

// GossipKey returns the region's gossip key and the id of the agent's
// token, as the control plane last named them (nil and "" before the
// first stream ever).
func (s *Store) GossipKey() (key []byte, tokenID string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.gossipKey, s.tokenID
}

// Checks returns the assigned checks, by id. The messages are shared:
// do not modify them.
func (s *Store) Checks() []*agentv1.Check {
	s.mu.RLock()
	out := make([]*agentv1.Check, 0, len(s.checks))
	for _, c := range s.checks {
		out = append(out, c)
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b *agentv1.Check) int { return strings.Compare(a.GetId(), b.GetId()) })
	return out
}

// KeyByHash returns the ingest key with this hash, if the agent may
// accept it (the local ingest's key store).
func (s *Store) KeyByHash(hash []byte) (*agentv1.IngestKey, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, ok := s.byHash[string(hash)]
	return k, ok
}

// Counts returns how many checks and keys the agent holds.
func (s *Store) Counts() (checks, keys int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.checks), len(s.keys)
}

// Held lists what the agent holds, for the stream's request.
func (s *Store) Held() (checks, keys []*agentv1.Held) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, c := range s.checks {
		checks = append(checks, &agentv1.Held{Id: c.GetId(), Version: c.GetVersion()})
	}
	for _, k := range s.keys {
		keys = append(keys, &agentv1.Held{Id: k.GetId(), Version: k.GetVersion()})
	}
	return checks, keys
}

// Changed is signalled after every change of the checks or keys.
func (s *Store) Changed() <-chan struct{} { return s.changed }

// Apply applies one message of the stream (a keepalive changes nothing)
// and, when something changed, writes the whole set to disk before it
// returns. On a write error the change stays applied in memory and is
// written with the next one.
func (s *Store) Apply(m *agentv1.AssignmentsResponse) (changed bool, err error) {
	s.mu.Lock()
	if r := m.GetRegion(); r != "" && r != s.region {
		s.region, changed = r, true
	}
	if k := m.GetGossipKey(); len(k) > 0 && !bytes.Equal(k, s.gossipKey) {
		s.gossipKey, changed = k, true
	}
	if t := m.GetTokenId(); t != "" && t != s.tokenID {
		s.tokenID, changed = t, true
	}
	for _, c := range m.GetChecks() {
		if old := s.checks[c.GetId()]; old == nil || !proto.Equal(old, c) {
			s.checks[c.GetId()], changed = c, true
		}
	}
	for _, id := range m.GetRemovedChecks() {
		if _, ok := s.checks[id]; ok {
			delete(s.checks, id)
			changed = true
		}
	}
	for _, k := range m.GetKeys() {
		if old := s.keys[k.GetId()]; old == nil || !proto.Equal(old, k) {
			s.dropKey(k.GetId())
			s.putKey(k)
			changed = true
		}
	}
	for _, id := range m.GetRemovedKeys() {
		if _, ok := s.keys[id]; ok {
			s.dropKey(id)
			changed = true
		}
	}
	if !changed {
		s.mu.Unlock()
		return false, nil
	}
	s.savedMs = m.GetServerUnixMs()
	b, merr := proto.MarshalOptions{Deterministic: true}.Marshal(s.snapshot())
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return true, s.write(b, merr)
}

// Save writes the whole set to disk again: after the data dir was removed
// under the running agent, so that a restart while cut off still finds
// it.
func (s *Store) Save() error {
	s.mu.RLock()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(s.snapshot())
	s.mu.RUnlock()
	return s.write(b, err)
}

// write replaces the file with b, the encoding of the set (encErr: its
// error).
func (s *Store) write(b []byte, encErr error) error {
	if encErr != nil {
		return fmt.Errorf("encode the assignments: %w", encErr)
	}
	if err := atomicfile.Write(s.path, b, 0o600); err != nil {
		return fmt.Errorf("save the assignments: %w", err)
	}
	return nil
}

// snapshot is the whole set as the file stores it (mu held).
func (s *Store) snapshot() *agentv1.AssignmentsResponse {
	out := &agentv1.AssignmentsResponse{Region: s.region, Synced: true, ServerUnixMs: s.savedMs, GossipKey: s.gossipKey, TokenId: s.tokenID}
	for _, c := range s.checks {
		out.Checks = append(out.Checks, c)
	}
	for _, k := range s.keys {
		out.Keys = append(out.Keys, k)
	}
	slices.SortFunc(out.Checks, func(a, b *agentv1.Check) int { return strings.Compare(a.GetId(), b.GetId()) })
	slices.SortFunc(out.Keys, func(a, b *agentv1.IngestKey) int { return strings.Compare(a.GetId(), b.GetId()) })
	return out
}

func (s *Store) putKey(k *agentv1.IngestKey) {
	s.keys[k.GetId()] = k
	if len(k.GetHash()) > 0 {
		s.byHash[string(k.GetHash())] = k
	}
}

func (s *Store) dropKey(id string) {
	if old := s.keys[id]; old != nil {
		if cur := s.byHash[string(old.GetHash())]; cur != nil && bytes.Equal(cur.GetHash(), old.GetHash()) && cur.GetId() == id {
			delete(s.byHash, string(old.GetHash()))
		}
		delete(s.keys, id)
	}
}
