package state

import (
	"errors"
	"sort"
	"strconv"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Agent presence and region verdicts. Agents'
// heartbeats become RecordAgentSeen commands (control/presence throttles
// them); the leader's region watcher judges each region from them and
// writes its verdict with SetRegionState, which raises one agent.offline
// or agent.online alert per account with monitors in the region.
//
//	agent:<agent id>                  -> statev1.Agent
//	region:<region>                   -> statev1.Region
//	region-acct:<region>:<account id> -> statev1.AlertedAccount

// MaxRegionAccounts bounds the accounts of one SetRegionState: each gets
// an alert with a delivery per default channel (at most
// MaxAccountChannels), so 32 of them are about 3,400 writes, inside a
// Small transaction that is a quarter full.
const MaxRegionAccounts = 32

// The alert types of agent regions.
const (
	AlertAgentOffline = "agent.offline"
	AlertAgentOnline  = "agent.online"
)

// AgentConnectedWindow: an agent that said it is connected counts as
// connected while its record is at most this old. Its control node writes
// it at least every 10 s while it heartbeats (every ~5 s), so this leaves
// room for two lost heartbeats.
const AgentConnectedWindow = 30 * time.Second

// AgentConnected tells whether agent a counts as connected at nowMs: it
// said so, in a record at most AgentConnectedWindow old.
func AgentConnected(a *statev1.Agent, nowMs int64) bool {
	return a.GetConnected() && nowMs-a.GetLastSeenUnixMs() <= AgentConnectedWindow.Milliseconds()
}

func agentKey(id string) []byte { return k(prefixAgent, id) }

func regionKey(name string) []byte { return k(prefixRegion, name) }

func regionAcctKey(region, account string) []byte { return k(prefixRegionAcct, region, account) }

// applyRecordAgentSeen stores what an agent said of itself, seen at the
// command's time.
func applyRecordAgentSeen(txn *badger.Txn, ctx applyCtx, c *raftv1.RecordAgentSeen) (*raftv1.Result, error) {
	if c.GetAgentId() == "" || c.GetRegion() == "" {
		return invalid("record agent seen: agent id and region are required"), nil
	}
	a := new(statev1.Agent)
	err := getProto(txn, agentKey(c.GetAgentId()), a)
	switch {
	case errors.Is(err, ErrNotFound):
		a.FirstSeenUnixMs = ctx.now
	case err != nil:
		return nil, err
	}
	a.Id, a.TokenId, a.Region, a.Name, a.Version, a.Node = c.GetAgentId(), c.GetTokenId(), c.GetRegion(), c.GetName(), c.GetVersion(), c.GetNode()
	a.Connected, a.BufferedEvents, a.BufferedResults = c.GetConnected(), c.GetBufferedEvents(), c.GetBufferedResults()
	a.OldestBufferedUnixMs, a.LastSeenUnixMs = c.GetOldestBufferedUnixMs(), ctx.now
	return ok(), setProto(txn, agentKey(a.GetId()), a)
}

// applySetRegionState applies the leader's verdict on a region. A command
// whose offline differs from the region's starts a transition at its
// since; one that agrees with the region but has another since is stale
// (a former leader's) and changes nothing. Each listed account is alerted
// once per transition: agent.offline marks it (region-acct:), and
// agent.online goes only to marked accounts and clears the mark. A
// suspended account is marked but gets no alert.
func applySetRegionState(txn *badger.Txn, ctx applyCtx, c *raftv1.SetRegionState) (*raftv1.Result, error) {
	if c.GetRegion() == "" {
		return invalid("set region state: region is required"), nil
	}
	reg := &statev1.Region{Name: c.GetRegion()}
	err := getProto(txn, regionKey(c.GetRegion()), reg)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	switch {
	case reg.GetOffline() != c.GetOffline():
		reg.Offline, reg.SinceUnixMs, reg.Notified = c.GetOffline(), c.GetSinceUnixMs(), false
	case reg.GetSinceUnixMs() != c.GetSinceUnixMs():
		return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Stale: true, Message: "stale"}, nil
	}
	for _, ra := range c.GetAccounts() {
		if err := regionAccountAlert(txn, ctx, reg, ra); err != nil {
			return nil, err
		}
	}
	if c.GetDone() {
		reg.Notified = true
	}
	return ok(), setProto(txn, regionKey(reg.GetName()), reg)
}

// regionAccountAlert alerts one account of a region's transition, once.
func regionAccountAlert(txn *badger.Txn, ctx applyCtx, reg *statev1.Region, ra *raftv1.RegionAccount) error {
	acct := ra.GetAccountId()
	key := regionAcctKey(reg.GetName(), acct)
	var mark statev1.AlertedAccount
	err := getProto(txn, key, &mark)
	marked := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	typ, monitors := AlertAgentOffline, ra.GetMonitors()
	if reg.GetOffline() {
		if marked {
			return nil
		}
		if ok, err := exists(txn, k(prefixAccount, acct)); err != nil || !ok {
			return err // a deleted account: nothing to alert
		}
		if err := setProto(txn, key, &statev1.AlertedAccount{SinceUnixMs: reg.GetSinceUnixMs(), Monitors: monitors}); err != nil {
			return err
		}
	} else {
		if !marked {
			return nil
		}
		if err := txn.Delete(key); err != nil {
			return err
		}
		typ, monitors = AlertAgentOnline, max(monitors, mark.GetMonitors())
		if ok, err := exists(txn, k(prefixAccount, acct)); err != nil || !ok {
			return err
		}
	}
	muted, err := suspendedAt(txn, acct, ctx.now)
	if err != nil || muted {
		return err
	}
	id := uuid.NewSHA1(alertNamespace, []byte("region\x00"+reg.GetName()+"\x00"+acct+"\x00"+strconv.FormatInt(reg.GetSinceUnixMs(), 10)+"\x00"+typ)).String()
	deliveries, err := route(txn, ctx.values, &statev1.Monitor{AccountId: acct})
	if err != nil {
		return err
	}
	a := &statev1.Alert{Id: id, AccountId: acct, Type: typ, OccurredUnixMs: reg.GetSinceUnixMs(),
		Deliveries: deliveries, Region: reg.GetName(), RegionMonitors: monitors}
	return storeAlert(txn, ctx, a)
}

// regionOffline tells whether the leader declared region offline.
func regionOffline(txn *badger.Txn, region string) (bool, error) {
	var reg statev1.Region
	err := getProto(txn, regionKey(region), &reg)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return reg.GetOffline(), err
}

// Agents returns every agent the control plane has heard of, by id.
func (s *Store) Agents() ([]*statev1.Agent, error) {
	var out []*statev1.Agent
	err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, prefixAgent, func() *statev1.Agent { return new(statev1.Agent) }, func(a *statev1.Agent) error {
			out = append(out, a)
			return nil
		})
	})
	return out, err
}

// Regions returns the regions the leader has judged, by name.
func (s *Store) Regions() ([]*statev1.Region, error) {
	var out []*statev1.Region
	err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, prefixRegion, func() *statev1.Region { return new(statev1.Region) }, func(r *statev1.Region) error {
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// RegionOffline tells whether the leader declared region offline.
func (s *Store) RegionOffline(region string) (bool, error) {
	var off bool
	err := s.view(func(txn *badger.Txn) error {
		var err error
		off, err = regionOffline(txn, region)
		return err
	})
	return off, err
}

// InOfflineRegion tells whether m is shown unknown because its agent
// region is offline: an enabled ping
// monitor whose newest ping came through an offline region, or an enabled
// check all of whose regions are offline.
func (s *Store) InOfflineRegion(m *statev1.Monitor) (bool, error) {
	regions := shownRegions(m)
	if len(regions) == 0 {
		return false, nil
	}
	off := true
	err := s.view(func(txn *badger.Txn) error {
		for _, r := range regions {
			o, err := regionOffline(txn, r)
			if err != nil || !o {
				off = false
				return err
			}
		}
		return nil
	})
	return off, err
}

// RegionAccounts lists the accounts with monitors in region, by account
// id: checks that name it, and ping monitors whose newest ping came
// through it. It reads every monitor (a region's transitions are rare).
func (s *Store) RegionAccounts(region string) ([]*raftv1.RegionAccount, error) {
	counts := map[string]int64{}
	err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, prefixMonitor, func() *statev1.Monitor { return new(statev1.Monitor) }, func(m *statev1.Monitor) error {
			if MonitorInRegion(m, region) {
				counts[m.GetAccountId()]++
			}
			return nil
		})
	})
	return sortedAccounts(counts), err
}

// AlertedAccounts lists the accounts alerted agent.offline for region and
// not yet agent.online, by account id.
func (s *Store) AlertedAccounts(region string) ([]*raftv1.RegionAccount, error) {
	counts := map[string]int64{}
	prefix := regionAcctKey(region, "")
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var mark statev1.AlertedAccount
			if err := it.Item().Value(func(v []byte) error { return proto.Unmarshal(v, &mark) }); err != nil {
				return err
			}
			counts[string(it.Item().Key()[len(prefix):])] = mark.GetMonitors()
		}
		return nil
	})
	return sortedAccounts(counts), err
}

// MonitorInRegion tells whether m is in region: a check that names it, or
// a ping monitor whose newest ping came through it.
func MonitorInRegion(m *statev1.Monitor, region string) bool {
	if m.GetKind() == KindPing {
		return m.GetPing().GetLastRegion() == region
	}
	for _, r := range m.GetRegions() {
		if r == region {
			return true
		}
	}
	return false
}

func sortedAccounts(counts map[string]int64) []*raftv1.RegionAccount {
	out := make([]*raftv1.RegionAccount, 0, len(counts))
	for id, n := range counts {
		out = append(out, &raftv1.RegionAccount{AccountId: id, Monitors: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetAccountId() < out[j].GetAccountId() })
	return out
}
