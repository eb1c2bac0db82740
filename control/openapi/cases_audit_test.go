package openapi_test

import (
	"lookout/cluster"
	"lookout/control/audit"
	"lookout/control/state"
)

// auditCases are the cases of GET /api/v1/audit.
func auditCases(f *fixture) []endpointCase {
	mk := f.main.ManagementKey
	// The page before the second oldest entry of main: the oldest alone
	// (the account's creation), whatever the other cases add later.
	entries, err := f.srv.Store.AuditLog(f.main.ID, nil, state.AuditFilter{}, state.MaxAuditEntries)
	if err != nil || len(entries) < 2 {
		panic("the fixture's account has no audit log")
	}
	before := audit.Cursor(state.AuditPosOf(entries[len(entries)-2]))
	const path = "/api/v1/audit"
	return []endpointCase{
		{name: "audit", method: "GET", path: path, headers: bearer(mk), status: 200, contains: `"entries":[{"id":"`},
		{name: "audit limit", method: "GET", path: path + "?limit=1", headers: bearer(mk), status: 200, contains: `"next_before":"`},
		{name: "audit before", method: "GET", path: path + "?before=" + before, headers: bearer(mk), status: 200, contains: `"action":"account.create"`},
		{name: "audit filters", method: "GET", path: path + "?actor=operator&action=key.create", headers: bearer(mk), status: 200,
			contains: `"actor":{"type":"operator","id":"","name":"operator"},"action":"key.create","target":{"kind":"key","uuid":"`},
		{name: "audit monitor", method: "GET", path: path + "?monitor=" + f.monitor, headers: bearer(f.readKey), status: 200, contains: `"entries":`},
		{name: "audit stale", method: "GET", path: path + "?stale=true", headers: bearer(mk), status: 200},
		{name: "audit bad before", method: "GET", path: path + "?before=AAAA", headers: bearer(mk), status: 400, contains: "invalid_request", invalidRequest: true},
		{name: "audit limit 0", method: "GET", path: path + "?limit=0", headers: bearer(mk), status: 400, contains: "invalid_request", invalidRequest: true},
		{name: "audit without key", method: "GET", path: path, status: 401},
		{name: "audit without read scope", method: "GET", path: path, headers: bearer(f.writeKey), status: 403, contains: "insufficient_scope"},
		{name: "audit without leader", method: "GET", path: path, headers: bearer(mk), status: 503, setup: func(f *fixture) func() {
			f.srv.Cluster.FailReads(cluster.ErrNoLeader)
			return func() { f.srv.Cluster.FailReads(nil) }
		}},
	}
}
