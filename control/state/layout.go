package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// The key layout. Every key starts with an entity prefix; ids are UUID
// strings and so never contain the ':' separator; hashes are raw bytes at
// the end of a key; numbers are big-endian so they sort.
//
//	meta:applied                        -> uint64, last applied raft index
//	acct:<account id>                   -> statev1.Account
//	acct-email:<lower-case e-mail>      -> account id
//	key:<sha-256 of the secret>         -> raftv1.Key
//	key-id:<account id>:<key id>        -> sha-256 of the secret
//	key-used:<account id>:<key id>      -> uint64 ms, the key's last recorded use (keyuse.go)
//	group:<account id>:<group id>       -> statev1.NotificationGroup
//	group-name:<account id>:<name>      -> group id
//	chan:<account id>:<channel id>      -> statev1.Channel
//	alert:<alert id>                    -> statev1.Alert (the outbox)
//	alert-pending:<alert id>            -> empty; alerts with deliveries left
//	alert-due:<uint64 ms><alert id>:<channel ref>
//	                                    -> empty; open deliveries by next try
//	alert-done:<uint64 ms><alert id>    -> empty; finished alerts by the time
//	                                       they finished (PruneAlerts)
//	alert-since:<monitor uuid>          -> statev1.OpenProblem; the first alert of a
//	                                       problem no recovery ended yet
//	dlv:<account id>:<channel id>:<uint64 alert ms><alert id>
//	                                    -> statev1.DeliveryRecord; a channel's
//	                                       delivery history (history.go)
//	agent-token:<sha-256 of the token>  -> statev1.AgentToken
//	req:<request id>                    -> statev1.AppliedRequest
//	req-time:<uint64 ms><request id>    -> empty; expiry order of req:
//
// Monitors, events and quotas. Monitor names are not ids: a name is always
// the last part of its key, so a ':' in it (check labels) stays unambiguous.
//
//	mon:<monitor uuid>                    -> statev1.Monitor
//	mon-name:<account id>:<kind>:<name>   -> monitor uuid; kinds are separate name spaces
//	mon-count:<account id>                -> uint64, monitors of the account (all kinds)
//	ev:<monitor uuid>:<uint64 seq>        -> statev1.StoredEvent
//	ev-due:<uint64 ms><monitor uuid>      -> empty; when age pruning next looks at the
//	                                         monitor's oldest events (PingState.events_due_unix_ms)
//	ev-purge:<monitor uuid>               -> empty; a deleted monitor whose last
//	                                         events PruneEvents still removes
//	evid:<account id>:<event id>          -> uint64 ms the id was remembered
//	evid-time:<uint64 ms><account id>:<event id>
//	                                      -> empty; expiry order of evid:
//	runs:<monitor uuid>                   -> the monitor's open runs (runs.go)
//	quota:<account id>                    -> statev1.Quota
//	mon-rate:<account id>                 -> uint64 minute, uint64 monitors created by
//	                                         pings in it (ingestguard.go)
//
// Check executions (executions.go):
//
//	exec:<check uuid>:<uint64 slot ms><region> -> raftv1.Execution
//	check:<check uuid>                    -> statev1.CheckStatus
//
// Uptime (uptime.go):
//
//	uptime:<monitor uuid>                 -> statev1.Uptime
//
// Badges and status pages (public.go):
//
//	badge:<badge key>                     -> account id
//	status-page:<account id>              -> statev1.StatusPage
//	status-slug:<slug>                    -> account id
//
// Agents and regions (agents.go):
//
//	agent:<agent id>                      -> statev1.Agent
//	region:<region>                       -> statev1.Region
//	region-acct:<region>:<account id>     -> statev1.AlertedAccount
//
// Maintenance windows (maintenance.go):
//
//	mw:<account id>:<window id>           -> raftv1.MaintenanceWindow
//
// Panel sessions ended before their expiry (sessions.go):
//
//	session-end:<session id>              -> statev1.EndedSession
//	session-end-time:<uint64 ms><session id>
//	                                      -> empty; expiry order of session-end:
//
// Users and invitations (users.go, invites.go):
//
//	user:<account id>:<user id>           -> statev1.User
//	user-email:<lower-case e-mail>        -> <account id>:<user id>
//	invite:<sha-256 of the link's secret> -> statev1.Invite
//	invite-acct:<account id>:<invite id>  -> sha-256 of the link's secret

// The audit log (audit.go):
//
//	audit:<account id>:<uint64 raft index><uint32 position>
//	                                      -> statev1.AuditEntry
//	audit-n:<account id>                  -> uint64, the account's entries
//	audit-due:<uint64 ms><account id>     -> empty; at or before the time of the
//	                                         account's oldest entry (pruning)
var (
	keyApplied         = []byte("meta:applied")
	prefixAccount      = []byte("acct:")
	prefixEmail        = []byte("acct-email:")
	prefixKeyHash      = []byte("key:")
	prefixKeyID        = []byte("key-id:")
	prefixKeyUsed      = []byte("key-used:")
	prefixGroup        = []byte("group:")
	prefixGroupName    = []byte("group-name:")
	prefixChannel      = []byte("chan:")
	prefixAlert        = []byte("alert:")
	prefixAlertPending = []byte("alert-pending:")
	prefixAlertDue     = []byte("alert-due:")
	prefixAlertDone    = []byte("alert-done:")
	prefixAlertSince   = []byte("alert-since:")
	prefixDelivery     = []byte("dlv:")
	prefixAgentToken   = []byte("agent-token:")
	prefixRequest      = []byte("req:")
	prefixReqTime      = []byte("req-time:")

	prefixMonitor      = []byte("mon:")
	prefixMonitorName  = []byte("mon-name:")
	prefixMonitorCount = []byte("mon-count:")
	prefixEvent        = []byte("ev:")
	prefixEventDue     = []byte("ev-due:")
	prefixEventPurge   = []byte("ev-purge:")
	prefixEventID      = []byte("evid:")
	prefixEventIDTime  = []byte("evid-time:")
	prefixRuns         = []byte("runs:")
	prefixQuota        = []byte("quota:")
	prefixMonitorRate  = []byte("mon-rate:")

	prefixExecution   = []byte("exec:")
	prefixCheckStatus = []byte("check:")

	prefixUptime     = []byte("uptime:")
	prefixBadge      = []byte("badge:")
	prefixStatusPage = []byte("status-page:")
	prefixStatusSlug = []byte("status-slug:")

	prefixAgent      = []byte("agent:")
	prefixRegion     = []byte("region:")
	prefixRegionAcct = []byte("region-acct:")

	prefixSessionEnd     = []byte("session-end:")
	prefixSessionEndTime = []byte("session-end-time:")

	prefixUser       = []byte("user:")
	prefixUserEmail  = []byte("user-email:")
	prefixInvite     = []byte("invite:")
	prefixInviteAcct = []byte("invite-acct:")
	prefixAudit      = []byte("audit:")
	prefixAuditCount = []byte("audit-n:")
	prefixAuditDue   = []byte("audit-due:")
)

// k joins a prefix and parts with ':' between the parts.
func k(prefix []byte, parts ...string) []byte {
	n := len(prefix)
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, prefix...)
	for i, p := range parts {
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, p...)
	}
	return b
}

// kb appends raw bytes to a prefix.
func kb(prefix, raw []byte) []byte {
	return append(append(make([]byte, 0, len(prefix)+len(raw)), prefix...), raw...)
}

// keysBefore lists, in order, at most n keys (copies) under prefix that sort
// before end: the time-ordered indexes' keys due before a time.
func keysBefore(txn *badger.Txn, prefix, end []byte, n int) [][]byte {
	var keys [][]byte
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	for it.Rewind(); it.Valid() && len(keys) < n; it.Next() {
		key := it.Item().Key()
		if bytes.Compare(key, end) >= 0 {
			break
		}
		keys = append(keys, bytes.Clone(key))
	}
	return keys
}

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func readUint64(txn *badger.Txn, key []byte) (uint64, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var v uint64
	err = item.Value(func(b []byte) error {
		if len(b) != 8 {
			return fmt.Errorf("key %q: want 8 bytes, have %d", key, len(b))
		}
		v = binary.BigEndian.Uint64(b)
		return nil
	})
	return v, err
}
