package state

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4/skl"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

// wide is n characters of 4 bytes each: the longest string of n characters.
func wide(n int) string { return strings.Repeat("\U0001D11E", n) }

// long is a string of n bytes.
func long(n int) string { return strings.Repeat("x", n) }

// createDefaultChannels are the commands creating n default channels c0, c1 ...
// of acct; applied as one batch, a worst case's setup takes fewer commits.
func createDefaultChannels(acct string, n int) []*raftv1.Command {
	cmds := make([]*raftv1.Command, n)
	for i := range cmds {
		cmds[i] = createChannelCmd(acct, fmt.Sprint("c", i), true)
	}
	return cmds
}

// fitsWithHeadroom applies c in one transaction that already holds a
// quarter of the store's transaction limits (bytes and writes) in filler
// writes, requires it to fit, and discards the transaction.
func fitsWithHeadroom(t *testing.T, s *Store, c *raftv1.Command) {
	t.Helper()
	maxBytes := 15 * s.db().Opts().MemTableSize / 100 // as badger.Open derives them
	maxCount := maxBytes / int64(skl.MaxNodeSize)
	txn := s.db().NewTransaction(true)
	defer txn.Discard()
	// Writes of 96 estimated bytes (a 20-byte key, a 64-byte value, 12
	// bytes of overhead), the limits' ratio. Badger counts every write
	// against the limits, a rewrite of a key as well, but keeps one pending
	// write per key: rewriting one key uses the same quarter of the limits
	// without making each iterator of the command sort the filler.
	filler := []byte("zz-filler-0000000000")
	for range maxCount / 4 {
		if err := txn.Set(filler, make([]byte, 64)); err != nil {
			t.Fatalf("filler: %v", err)
		}
	}
	if _, err := s.applyEntry(txn, Entry{Index: s.AppliedIndex() + 1, Command: c}); err != nil {
		t.Fatalf("the command does not fit a transaction that is a quarter full: %v", err)
	}
}

// worstCase is the largest command of one type that the APIs (or the
// leader's tasks) can produce, on the state that makes it heaviest, and a
// command of that type over its bounds.
type worstCase struct {
	setup    func(t *testing.T, s *Store)
	worst    func(t *testing.T, s *Store) *raftv1.Command
	want     raftv1.Status
	over     *raftv1.Command
	overCode string // the code of the refusal (CodeCommandTooLarge unless the apply function bounds it)
	// smallGap, when set, says why the worst command is not checked with
	// the Small options (a known gap, left to its owner).
	smallGap string
}

// TestWorstCasePerCommandType: for every case of the Command oneof, the
// worst command fits one transaction with a quarter of it to spare, with
// the Small options (the smallest transactions) and the default ones (where
// values up to 1 MiB count in full), and applies; one over its bounds is
// refused as INVALID, without a panic and writing only the applied index.
func TestWorstCasePerCommandType(t *testing.T) {
	cases := worstCases()
	ops := raftv1.File_lookout_raft_v1_command_proto.Messages().ByName("Command").Oneofs().ByName("op").Fields()
	for i := range ops.Len() {
		name, found := string(ops.Get(i).Name()), false
		for c := range cases {
			found = found || c == name || strings.HasPrefix(c, name+"/")
		}
		if !found {
			t.Errorf("no worst case for %s", name)
		}
	}
	for _, small := range []bool{true, false} {
		// Cases of their own for each run: some share a value between
		// their setup and their worst command.
		for name, tc := range worstCases() {
			t.Run(fmt.Sprintf("%s small=%v", name, small), func(t *testing.T) {
				t.Parallel()
				s, err := Open(Options{Dir: t.TempDir(), Small: small})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				mustOK(t, s, newAccount("a"))
				if tc.setup != nil {
					tc.setup(t, s)
				}
				c := tc.worst(t, s)
				if err := CheckCommand(c); err != nil {
					t.Fatalf("the worst command is over its bounds: %v", err)
				}
				if small && tc.smallGap != "" {
					t.Logf("worst case not checked with the Small options: %s", tc.smallGap)
				} else {
					fitsWithHeadroom(t, s, c)
					if res := apply(t, s, c)[0]; res.GetStatus() != tc.want {
						t.Fatalf("worst: %v %s", res.GetStatus(), res.GetMessage())
					}
				}
				if !small {
					return
				}
				before, applied := dumpKV(t, s, false), s.AppliedIndex()
				res := apply(t, s, tc.over)[0]
				code := tc.overCode
				if code == "" {
					code = CodeCommandTooLarge
				}
				if res.GetStatus() != raftv1.Status_STATUS_INVALID || res.GetCode() != code && code != "-" {
					t.Fatalf("over: %v %q %s", res.GetStatus(), res.GetCode(), res.GetMessage())
				}
				requireSameKV(t, before, dumpKV(t, s, false))
				if s.AppliedIndex() != applied+1 {
					t.Fatalf("applied %d, want %d", s.AppliedIndex(), applied+1)
				}
			})
		}
	}
}

func worstCases() map[string]worstCase {
	cases := map[string]worstCase{
		"create_account": {
			worst: func(*testing.T, *Store) *raftv1.Command {
				op := accountOp("b", long(254-12)+"@example.com")
				op.Plan.Name, op.PasswordHash = wide(64), []byte(long(60))
				op.IngestKey.Hash, op.ManagementKey.Hash = []byte(long(32)), []byte(long(32)+"m")
				return createAccount(op)
			},
			want: raftv1.Status_STATUS_OK,
			over: createAccount(accountOp("c", long(MaxKeyPartBytes+1))),
		},
		"set_plan": {
			worst: func(*testing.T, *Store) *raftv1.Command { return setPlan("a", plan(wide(64))) },
			want:  raftv1.Status_STATUS_OK,
			over:  setPlan(long(MaxKeyPartBytes+1), plan("p")),
		},
		"set_password": {
			worst: func(*testing.T, *Store) *raftv1.Command { return setPassword("a", []byte(long(MaxPasswordHashBytes))) },
			want:  raftv1.Status_STATUS_OK,
			over:  setPassword("a", []byte(long(MaxPasswordHashBytes+1))),
		},
		"end_session": {
			worst: func(*testing.T, *Store) *raftv1.Command {
				return endSession(long(MaxKeyPartBytes), long(MaxKeyPartBytes), t0+MaxSessionMillis)
			},
			want: raftv1.Status_STATUS_OK,
			over: endSession(long(MaxKeyPartBytes+1), "a", t0+1),
		},
		"create_key": {
			worst: func(*testing.T, *Store) *raftv1.Command {
				k := key("a", "k2", raftv1.KeyType_KEY_TYPE_MANAGEMENT)
				k.Name, k.Scopes, k.Hash = wide(100), []string{"read", "write", "delete"}, []byte(long(32))
				return createKey(k)
			},
			want: raftv1.Status_STATUS_OK,
			over: createKey(&raftv1.Key{Id: "k3", AccountId: "a", Hash: []byte(long(MaxKeyPartBytes + 1))}),
		},
		"record_key_used": {
			worst: func(*testing.T, *Store) *raftv1.Command { return recordKeyUsed("a", "mk", t0) },
			want:  raftv1.Status_STATUS_OK,
			over:  recordKeyUsed("a", long(MaxKeyPartBytes+1), t0),
		},
		"revoke_key": {
			worst: func(*testing.T, *Store) *raftv1.Command { return revokeKey("a", "ik") },
			want:  raftv1.Status_STATUS_OK,
			over:  revokeKey("a", long(MaxKeyPartBytes+1)),
		},
		"revoke_agent_token": {
			setup: func(t *testing.T, s *Store) {
				tokens := make([]*raftv1.Command, 100)
				for i := range tokens {
					tokens[i] = createAgentToken(fmt.Sprint("t", i), "eu", fmt.Sprint("hash-", i))
				}
				mustOK(t, s, tokens...)
			},
			worst: func(*testing.T, *Store) *raftv1.Command { return revokeAgentToken("t99") },
			want:  raftv1.Status_STATUS_OK,
			over:  revokeAgentToken(long(MaxKeyPartBytes + 1)),
		},
		"create_notification_group": {
			worst: func(*testing.T, *Store) *raftv1.Command {
				return createGroup("a", "g", wide(100), groupChannels(MaxGroupChannels, MaxCommandBytes-2048))
			},
			want: raftv1.Status_STATUS_OK,
			over: createGroup("a", "g", "n", groupChannels(1, MaxCommandBytes+1)),
		},
		"create_agent_token": {
			worst: func(*testing.T, *Store) *raftv1.Command {
				c := createAgentToken("t", long(64), long(32))
				c.GetCreateAgentToken().Name = wide(100)
				return c
			},
			want: raftv1.Status_STATUS_OK,
			over: createAgentToken("t", "eu", long(MaxKeyPartBytes+1)),
		},
		"create_channel": {
			setup: func(t *testing.T, s *Store) {
				mustOK(t, s, createDefaultChannels("a", MaxAccountChannels-1)...)
			},
			worst: func(*testing.T, *Store) *raftv1.Command {
				c := createChannelCmd("a", "last", true)
				c.GetCreateChannel().Name = wide(100)
				c.GetCreateChannel().ConfigJson = fmt.Appendf(nil, `{"url":"https://example.com/%s"}`, long(MaxCommandBytes-2048))
				return c
			},
			want: raftv1.Status_STATUS_OK,
			over: func() *raftv1.Command {
				c := createChannelCmd("a", "over", true)
				c.GetCreateChannel().ConfigJson = []byte(long(MaxCommandBytes + 1))
				return c
			}(),
		},
		"ingest_batch":         ingestWorstCase(),
		"prune_events":         pruneWorstCase(),
		"prune_alerts":         pruneAlertsWorstCase(),
		"delete_monitor":       deleteWorstCase(),
		"delete_monitor/check": deleteCheckWorstCase(),
		"put_monitors/renames": putMonitorsWorstCase(),
		"put_monitors/creates": {
			// As many of the longest manifests as the bytes allow.
			worst: func(*testing.T, *Store) *raftv1.Command {
				var specs []*raftv1.MonitorSpec
				for i, size := 0, 0; i < MaxPutMonitors; i++ {
					spec := fullSpec(i, 16<<10)
					if size += proto.Size(spec) + 8; size > MaxPutMonitorsBytes-4096 {
						break
					}
					specs = append(specs, spec)
				}
				return putMonitorsCmd("a", specs, nil)
			},
			want: raftv1.Status_STATUS_OK,
			over: putMonitorsCmd("a", []*raftv1.MonitorSpec{{Uuid: "u", Kind: KindPing, Name: "n", DisplayName: long(MaxPutMonitorsBytes)}}, nil),
		},
		"fire_deadline":     fireWorstCase(),
		"fire_deadlines":    fireBatchWorstCase(),
		"record_executions": recordExecutionsWorstCase(),
		"record_delivery":   recordWorstCase(),
		"record_deliveries": recordBatchWorstCase(),
		"record_agent_seen": {
			worst: func(*testing.T, *Store) *raftv1.Command {
				return agentSeenCmd(&raftv1.RecordAgentSeen{AgentId: long(MaxKeyPartBytes), TokenId: long(MaxKeyPartBytes), Region: long(MaxKeyPartBytes),
					Name: wide(255), Version: long(1000), Node: long(1000), Connected: true, BufferedEvents: 1 << 40, BufferedResults: 1 << 40})
			},
			want: raftv1.Status_STATUS_OK,
			over: agentSeenCmd(&raftv1.RecordAgentSeen{AgentId: long(MaxKeyPartBytes + 1), Region: "eu"}),
		},
		"set_region_state":     regionWorstCase(),
		"forget_agents":        forgetAgentsWorstCase(),
		"forget_agents/region": forgetRegionWorstCase(),
		"set_badge_key": {
			setup: func(t *testing.T, s *Store) { mustOK(t, s, setBadgeKey("a", long(MaxKeyPartBytes), false)) },
			worst: func(*testing.T, *Store) *raftv1.Command { return setBadgeKey("a", long(MaxKeyPartBytes-1)+"2", false) },
			want:  raftv1.Status_STATUS_OK,
			over:  setBadgeKey("a", long(MaxKeyPartBytes+1), false),
		},
		"put_status_page":           statusPageWorstCase(),
		"pause_monitor":             pauseWorstCase(),
		"judge_afresh":              judgeWorstCase(),
		"put_maintenance_window":    putWindowWorstCase(),
		"delete_maintenance_window": deleteWindowWorstCase(),
		"mark_alive":                markAliveWorstCase(),
	}
	maps.Copy(cases, channelWorstCases())
	maps.Copy(cases, userWorstCases())
	maps.Copy(cases, auditWorstCases(cases))
	return cases
}

// groupChannels is a JSON array of n channels of about size bytes in all.
func groupChannels(n, size int) []byte {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"type":"webhook","config":{"url":"https://example.com/%s"}}`, long(size/n-60))
	}
	return []byte("[" + strings.Join(items, ",") + "]")
}

// bigSpec is a ping monitor of about 1 KB (kept inline in Small stores),
// in the notification group "g" when group is true.
func bigSpec(i int, group bool) *raftv1.MonitorSpec {
	interval := int64(60)
	s := &raftv1.MonitorSpec{Uuid: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Kind: KindPing, Name: fmt.Sprint("job-", i),
		Enabled: true, TimeoutSeconds: 3600, ExpectedIntervalSeconds: &interval, DisplayName: wide(200)}
	if group {
		s.NotificationGroup = "g"
	}
	return s
}

// fullSpec is check i with its names, URL and regions at their longest
// and tags of the longest kind up to about size bytes.
func fullSpec(i, size int) *raftv1.MonitorSpec {
	regions := make([]string, 32)
	for j := range regions {
		regions[j] = fmt.Sprintf("%02d-", j) + long(61)
	}
	project := fmt.Sprintf("%03d", i) + wide(99)
	s := &raftv1.MonitorSpec{
		Uuid: fmt.Sprintf("10000000-0000-4000-8000-%012d", i), Kind: KindHTTPCheck, Name: fmt.Sprintf("%03d", i) + wide(252),
		Enabled: true, DisplayName: wide(255), Project: &project, Schedule: "*/5 * * * *", Regions: regions,
		Config: &raftv1.CheckConfig{Url: "https://example.com/" + long(2000), Method: "GET", Timeout: 60, ExpectedContent: wide(100)},
	}
	for j := 0; j < 50 && proto.Size(s)+250 < size; j++ {
		s.Tags = append(s.Tags, fmt.Sprintf("%02d", j)+wide(62))
	}
	return s
}

func ingestWorstCase() worstCase {
	return worstCase{
		setup: func(t *testing.T, s *Store) {
			mustOK(t, s, createDefaultChannels("a", MaxAccountChannels)...)
		},
		// What the ingest API's batcher proposes at most: 256 events in
		// 512 KiB, each a first fail of a new monitor (an alert with a
		// delivery per channel), every field at its longest.
		worst: func(*testing.T, *Store) *raftv1.Command {
			evs := make([]*raftv1.Event, IngestBatchMaxEvents)
			for i := range evs {
				ev := ping("a", fmt.Sprintf("%03d-", i)+long(60), "fail", t0, eventID(fmt.Sprintf("%03d-", i)+wide(124)),
					series(long(64)), project(fmt.Sprintf("%03d", i)+wide(99)), timestamp(t0/1000))
				ev.Host, ev.ExitCode = wide(255), proto.Int64(1)
				ev.Message = long(max(0, (512<<10)/IngestBatchMaxEvents-proto.Size(ev)-64))
				evs[i] = ev
			}
			return ingestAt(t0, 0, evs...)
		},
		want: raftv1.Status_STATUS_OK,
		over: ingestAt(t0, 0, make([]*raftv1.Event, IngestBatchMaxEvents+1)...),
		// Each such event writes ~3.4 KB of keys (event id and project at
		// their longest, twice each): about 184 of them fit a Small
		// transaction, not 256. The default options hold it easily. Left
		// to IngestBatch's bounds (ingest.go) and the batcher.
		smallGap: "IngestBatchMaxEvents worst-case events do not fit a Small transaction (about 184 do)",
	}
}

func pruneWorstCase() worstCase {
	return worstCase{
		// Many monitors of about 1 KB, each with expired events.
		setup: func(t *testing.T, s *Store) {
			for b := range 2 {
				specs := make([]*raftv1.MonitorSpec, 100)
				for i := range specs {
					specs[i] = bigSpec(b*100+i, false)
				}
				mustOK(t, s, putMonitorsCmd("a", specs, nil))
			}
			for round := range 6 {
				var evs []*raftv1.Event
				for i := range 200 {
					evs = append(evs, ping("a", fmt.Sprint("job-", i), "complete", t0+int64(round)))
					if len(evs) == IngestBatchMaxEvents {
						ingestOK(t, s, ingestAt(t0, 0, evs...))
						evs = nil
					}
				}
				ingestOK(t, s, ingestAt(t0, 0, evs...))
			}
		},
		worst: func(*testing.T, *Store) *raftv1.Command { return pruneEvents(t0+100, MaxPruneEvents) },
		want:  raftv1.Status_STATUS_OK,
		over:  pruneEvents(t0+100, MaxPruneEvents+1),
		// PruneEvents bounds its max itself.
		overCode: "-",
	}
}

func pruneAlertsWorstCase() worstCase {
	return worstCase{
		// More finished alerts than one entry deletes (an account without
		// channels: its alerts are finished as they are raised). Their
		// size does not matter: a delete reads no value.
		setup: func(t *testing.T, s *Store) {
			mustOK(t, s, uncapped("a"))
			for b := range 5 {
				evs := make([]*raftv1.Event, IngestBatchMaxEvents)
				for i := range evs {
					evs[i] = ping("a", fmt.Sprint("job-", b, "-", i), "fail", t0)
				}
				ingestOK(t, s, ingestAt(t0, 0, evs...))
			}
			if n := len(keysWithPrefix(t, s, prefixAlertDone)); n <= MaxPruneAlerts {
				t.Fatalf("%d finished alerts, want more than %d", n, MaxPruneAlerts)
			}
		},
		worst: func(*testing.T, *Store) *raftv1.Command { return pruneAlertsCmd(t0+100, t0+1, MaxPruneAlerts) },
		want:  raftv1.Status_STATUS_OK,
		over:  pruneAlertsCmd(t0+100, t0+1, MaxPruneAlerts+1),
		// PruneAlerts bounds its max itself.
		overCode: "-",
	}
}

func deleteWorstCase() worstCase {
	var id string
	return worstCase{
		// A monitor with more events than one entry deletes.
		setup: func(t *testing.T, s *Store) {
			for range 5 {
				evs := make([]*raftv1.Event, IngestBatchMaxEvents)
				for i := range evs {
					evs[i] = ping("a", "many", "complete", t0)
				}
				ingestOK(t, s, ingestAt(t0, 0, evs...))
			}
			id = mustMonitor(t, s, "a", "many").GetUuid()
		},
		worst: func(*testing.T, *Store) *raftv1.Command { return deleteMonitor("a", id) },
		want:  raftv1.Status_STATUS_OK,
		over:  deleteMonitor("a", long(MaxKeyPartBytes+1)),
	}
}

func putMonitorsWorstCase() worstCase {
	return worstCase{
		// Checks with the longest names, renamed to other longest names,
		// each into a new project with the longest name: four writes of
		// about 1 KB per monitor.
		setup: func(t *testing.T, s *Store) {
			for b := 0; b < MaxPutMonitors; b += 100 {
				specs := make([]*raftv1.MonitorSpec, 100)
				for i := range specs {
					specs[i] = renamedCheck(b+i, "a")
				}
				mustOK(t, s, putMonitorsCmd("a", specs, nil))
			}
		},
		worst: func(*testing.T, *Store) *raftv1.Command {
			specs := make([]*raftv1.MonitorSpec, MaxPutMonitors)
			for i := range specs {
				specs[i] = renamedCheck(i, "b")
				p := fmt.Sprintf("%03d", i) + wide(99)
				specs[i].Project = &p
			}
			return putMonitorsCmd("a", nil, specs)
		},
		want: raftv1.Status_STATUS_OK,
		over: putMonitorsCmd("a", minimalPings(MaxPutMonitors+1), nil),
		// About 180 such renames fit a Small transaction, not 1,000 (the
		// default options hold them with room to spare); Small stores are
		// for tests, which apply far smaller bundles.
		smallGap: "MaxPutMonitors worst-case renames do not fit a Small transaction (about 180 do)",
	}
}

// renamedCheck is check i with a name of 255 4-byte characters.
func renamedCheck(i int, variant string) *raftv1.MonitorSpec {
	return &raftv1.MonitorSpec{Uuid: fmt.Sprintf("20000000-0000-4000-8000-%012d", i), Kind: KindHTTPCheck,
		Name: fmt.Sprintf("%s%03d", variant, i) + wide(251), Enabled: true, Schedule: "1m",
		Config: &raftv1.CheckConfig{Url: "https://example.com/", Method: "GET", Timeout: 10}}
}

func fireWorstCase() worstCase {
	var id string
	var due int64
	return worstCase{
		// A monitor of about 1 KB in a group of the most channels, missed.
		setup: func(t *testing.T, s *Store) {
			mustOK(t, s, createGroup("a", "g", "g", groupChannels(MaxGroupChannels, 4096)))
			mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{bigSpec(0, true)}, nil))
			ingestOK(t, s, ingestAt(t0, 0, ping("a", "job-0", "complete", t0, func(e *raftv1.Event) { e.Message = long(64 << 10) })))
			m := mustMonitor(t, s, "a", "job-0")
			_, _, due = pingstate.Deadlines(PingSettings(m), PingState(m))
			id = m.GetUuid()
		},
		worst: func(*testing.T, *Store) *raftv1.Command {
			return cmd(fireCmd("a", id, pingstate.DeadlineMissed, due, due+1))
		},
		want: raftv1.Status_STATUS_OK,
		over: cmd(fireCmd(long(MaxKeyPartBytes+1), "m", pingstate.DeadlineMissed, 1, 2)),
	}
}

func recordWorstCase() worstCase {
	var alertID string
	return worstCase{
		// An alert with a delivery per channel of the account and the
		// longest message, and the longest error the dispatcher records.
		setup: func(t *testing.T, s *Store) {
			mustOK(t, s, createDefaultChannels("a", MaxAccountChannels)...)
			ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "fail", t0, func(e *raftv1.Event) { e.Message = long(64 << 10) })))
			pending, err := s.PendingAlerts(0)
			if err != nil || len(pending) != 1 || len(pending[0].GetDeliveries()) != MaxAccountChannels {
				t.Fatalf("pending %d, %v", len(pending), err)
			}
			alertID = pending[0].GetId()
			// The channel's history is full: the record drops the oldest.
			mustOK(t, s, uncapped("a"))
			for i := range MaxChannelHistory {
				ingestOK(t, s, ingestAt(t0, 0, ping("a", fmt.Sprint("other-", i), "fail", t0)))
			}
			fullChannelHistory(t, s, "c7", alertID)
		},
		worst: func(*testing.T, *Store) *raftv1.Command {
			return cmd(&raftv1.Command{Op: &raftv1.Command_RecordDelivery{RecordDelivery: &raftv1.RecordDelivery{
				AlertId: alertID, ChannelRef: "chan:c7", Error: long(503), NextTryUnixMs: t0 + 1000,
			}}})
		},
		want: raftv1.Status_STATUS_OK,
		over: cmd(&raftv1.Command{Op: &raftv1.Command_RecordDelivery{RecordDelivery: &raftv1.RecordDelivery{AlertId: long(MaxKeyPartBytes + 1)}}}),
	}
}

func recordExecutionsWorstCase() worstCase {
	const checks = MaxExecutionsPerCommand
	id := func(i int) string { return fmt.Sprintf("30000000-0000-4000-8000-%012d", i) }
	return worstCase{
		// Checks of an account with the most channels, each failing for
		// the first time (an alert with a delivery per channel), every
		// field of the execution at its longest, and an older execution to
		// trim (retention 1).
		setup: func(t *testing.T, s *Store) {
			mustOK(t, s, createDefaultChannels("a", MaxAccountChannels)...)
			specs := make([]*raftv1.MonitorSpec, checks)
			for i := range specs {
				specs[i] = &raftv1.MonitorSpec{Uuid: id(i), Kind: KindSSLCheck, Name: fmt.Sprint("cert-", i), Enabled: true, Schedule: "1m",
					Config: &raftv1.CheckConfig{Domain: "example.com", WarningDays: 30, AlertDays: 7}}
			}
			mustOK(t, s, putMonitorsCmd("a", specs, nil))
			records := make([]*raftv1.Command, checks)
			for i := range records {
				e := &raftv1.Execution{AccountId: "a", CheckUuid: id(i), Region: RegionControl, SlotUnixMs: t0, Status: ExecSuccess, Attempts: 1}
				records[i] = cmd(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{e}, RetentionCount: 1}}})
			}
			mustOK(t, s, records...)
		},
		worst: func(*testing.T, *Store) *raftv1.Command {
			execs := make([]*raftv1.Execution, checks)
			for i := range execs {
				names := make([]string, MaxExecutionDNSNames)
				for j := range names {
					names[j] = long(MaxExecutionDNSName)
				}
				answers := make([]string, MaxExecutionAnswers)
				for j := range answers {
					answers[j] = long(MaxExecutionAnswer)
				}
				// Every detail at its bounds at once (no probe sends both
				// ssl and dns; an agent could).
				execs[i] = &raftv1.Execution{AccountId: "a", CheckUuid: id(i), Region: long(MaxExecutionLabel), Agent: long(MaxExecutionLabel),
					SlotUnixMs: t0 + 60_000, Status: ExecFailed, Attempts: 4, Error: long(MaxExecutionError), ErrorKind: long(MaxExecutionLabel),
					Ssl:  &raftv1.ExecutionSSL{Issuer: long(MaxExecutionText), Subject: long(MaxExecutionText), DnsNames: names, DaysLeft: 1},
					Dns:  &raftv1.ExecutionDNS{Answers: answers, RttMs: 1},
					Tcp:  &raftv1.ExecutionTCP{ConnectMs: 1},
					Http: &raftv1.ExecutionHTTP{StatusCode: 500}}
			}
			return cmd(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: execs, RetentionCount: 1}}})
		},
		want: raftv1.Status_STATUS_OK,
		over: cmd(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{{
			AccountId: "a", CheckUuid: id(0), Region: RegionControl, SlotUnixMs: t0, Status: ExecFailed, Error: long(MaxCommandBytes)}}}}}),
	}
}

func deleteCheckWorstCase() worstCase {
	const id = "40000000-0000-4000-8000-000000000001"
	return worstCase{
		// A check holding MaxExecutionRetention executions: deleting it
		// deletes them all in its entry.
		setup: func(t *testing.T, s *Store) {
			mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{{Uuid: id, Kind: KindHTTPCheck, Name: "site", Enabled: true, Schedule: "1m",
				Config: &raftv1.CheckConfig{Url: "https://example.com/", Method: "GET", Timeout: 10}}}, nil))
			for slot := 0; slot < MaxExecutionRetention; slot += MaxExecutionsPerCommand {
				execs := make([]*raftv1.Execution, MaxExecutionsPerCommand)
				for i := range execs {
					execs[i] = &raftv1.Execution{AccountId: "a", CheckUuid: id, Region: RegionControl, SlotUnixMs: t0 + int64(slot+i)*60_000, Status: ExecSuccess, Attempts: 1}
				}
				mustOK(t, s, cmd(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: execs, RetentionCount: MaxExecutionRetention}}}))
			}
		},
		worst: func(*testing.T, *Store) *raftv1.Command { return deleteMonitor("a", id) },
		want:  raftv1.Status_STATUS_OK,
		over: cmd(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{{
			AccountId: "a", CheckUuid: id, Region: RegionControl, SlotUnixMs: t0, Status: ExecSuccess}}, RetentionCount: MaxExecutionRetention + 1}}}),
		// 10,001 deletions: more writes than a Small transaction allows
		// (6,553); the default options hold them.
		smallGap: "deleting a check with MaxExecutionRetention executions does not fit a Small transaction",
	}
}
