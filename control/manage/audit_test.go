package manage_test

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"lookout/control/state"
	"lookout/internal/apikey"
)

// auditEntries reads GET /api/v1/audit with query q and returns its
// entries and next_before.
func (a *api) auditEntries(q string) ([]map[string]any, string) {
	a.t.Helper()
	status, body, _ := a.do("GET", "/api/v1/audit"+q, nil)
	if status != 200 {
		a.t.Fatalf("GET /api/v1/audit%s: %d %v", q, status, body)
	}
	var out []map[string]any
	for _, e := range body["entries"].([]any) {
		out = append(out, e.(map[string]any))
	}
	next, _ := body["next_before"].(string)
	return out, next
}

// summarize is an entry as "action target-name by actor-name" (by its
// type when it has no name: the test's own commands carry no actor).
func summarize(es []map[string]any) string {
	var out []string
	for _, e := range es {
		actor := e["actor"].(map[string]any)
		who := actor["name"]
		if who == "" {
			who = actor["type"]
		}
		out = append(out, fmt.Sprintf("%s %s by %s", e["action"], e["target"].(map[string]any)["name"], who))
	}
	return strings.Join(out, ", ")
}

// TestAuditRecordsTheNamedKeyAndWhatItChanged: every change made through
// the Management API is in GET /api/v1/audit with the key that made it
// (its name and id), the action, the target and the diff; an apply writes
// one entry per monitor it creates or changes and none for one it leaves.
func TestAuditRecordsTheNamedKeyAndWhatItChanged(t *testing.T) {
	a := newAPI(t)
	secret := createKey(t, a.srv, a.acct.ID, "read", "write", "delete")
	key, err := a.srv.Store.KeyByHash(apikey.Hash(secret))
	if err != nil {
		t.Fatal(err)
	}
	status, m, _ := a.doKey("POST", "/api/v1/monitors", secret, ping("backup", nil))
	if status != 201 {
		t.Fatalf("create: %d %v", status, m)
	}
	id := m["uuid"].(string)
	if status, _, _ := a.doKey("PUT", "/api/v1/monitors/"+id, secret, ping("backup", map[string]any{"timeout_seconds": 900})); status != 200 {
		t.Fatalf("replace: %d", status)
	}
	status, rep, _ := a.doKey("POST", "/api/v1/monitors/apply", secret, bundle(
		ping("backup", map[string]any{"timeout_seconds": 900}), // unchanged
		ping("nightly", map[string]any{"tags": []string{"db"}}),
	))
	if status != 200 || summary(rep)["create"] != 1 || summary(rep)["unchanged"] != 1 {
		t.Fatalf("apply: %d %v", status, rep)
	}
	if status, _, _ := a.doKey("DELETE", "/api/v1/monitors/"+id+"?confirm=true", secret, nil); status != 204 {
		t.Fatalf("delete: %d", status)
	}
	es, _ := a.auditEntries("")
	if got := summarize(es); got != "delete backup by named, apply nightly by named, update backup by named, create backup by named, key.create named by unknown, account.create owner@example.com by unknown" {
		t.Fatalf("entries: %s", got)
	}
	for _, e := range es[:4] {
		if actor := e["actor"].(map[string]any); actor["type"] != "key" || actor["id"] != key.GetId() {
			t.Errorf("%s: actor %v, want the key %s", e["action"], actor, key.GetId())
		}
	}
	update := es[2]
	if target := update["target"].(map[string]any); target["kind"] != "monitor" || target["uuid"] != id {
		t.Errorf("target %v", target)
	}
	if diff := update["diff"].(map[string]any); !reflect.DeepEqual(diff, map[string]any{"timeout_seconds": []any{600.0, 900.0}}) {
		t.Errorf("update diff %v", diff)
	}
	if diff := es[1]["diff"].(map[string]any); !reflect.DeepEqual(diff["tags"], []any{nil, []any{"db"}}) || !reflect.DeepEqual(diff["name"], []any{nil, "nightly"}) {
		t.Errorf("apply diff %v", diff)
	}
	if at, _ := update["at"].(string); at != "2026-03-15T12:30:00Z" || update["id"] == "" {
		t.Errorf("at %v id %v", update["at"], update["id"])
	}
}

// TestReadsWriteNoAuditEntry: reads (lists, a monitor, export, a dry-run
// apply, histories, the account, the status page, the audit log itself)
// and an apply that changes nothing write no entry.
func TestReadsWriteNoAuditEntry(t *testing.T) {
	a := newAPI(t)
	_, m, _ := a.do("POST", "/api/v1/monitors", ping("backup", nil))
	id := m["uuid"].(string)
	before, err := a.srv.Store.AuditLog(a.acct.ID, nil, state.AuditFilter{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/v1/monitors", nil},
		{"GET", "/api/v1/monitors?include=status", nil},
		{"GET", "/api/v1/monitors/" + id, nil},
		{"GET", "/api/v1/monitors/export", nil},
		{"GET", "/api/v1/monitors/" + id + "/events", nil},
		{"GET", "/api/v1/account", nil},
		{"GET", "/api/v1/status-page", nil},
		{"GET", "/api/v1/audit", nil},
		{"POST", "/api/v1/monitors/apply?dry_run=true", bundle(ping("backup", map[string]any{"timeout_seconds": 60}), ping("new", nil))},
		{"POST", "/api/v1/monitors/apply", bundle(ping("backup", nil))},
		{"PUT", "/api/v1/monitors/" + id, ping("backup", nil)},
	} {
		if status, body, _ := a.do(r.method, r.path, r.body); status >= 300 && status != 404 {
			t.Fatalf("%s %s: %d %v", r.method, r.path, status, body)
		}
	}
	after, err := a.srv.Store.AuditLog(a.acct.ID, nil, state.AuditFilter{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("%d entries after reads, want %d: newest %v", len(after), len(before), after[0])
	}
}

// TestAuditPagesAndFilters: limit and next_before page through the log;
// actor, monitor and action filter it; bad values are 400; the read scope
// is needed.
func TestAuditPagesAndFilters(t *testing.T) {
	a := newAPI(t)
	for _, name := range []string{"a", "b", "c", "d"} {
		if status, _, _ := a.do("POST", "/api/v1/monitors", ping(name, nil)); status != 201 {
			t.Fatalf("create %s: %d", name, status)
		}
	}
	var pages []string
	q := "?limit=2"
	for i := 0; ; i++ {
		es, next := a.auditEntries(q)
		pages = append(pages, summarize(es))
		if next == "" {
			break
		}
		if i > 5 {
			t.Fatal("paging does not end")
		}
		q = "?limit=2&before=" + url.QueryEscape(next)
	}
	want := []string{"create d by personal, create c by personal", "create b by personal, create a by personal", "account.create owner@example.com by unknown"}
	if !reflect.DeepEqual(pages, want) {
		t.Fatalf("pages %q, want %q", pages, want)
	}
	for q, want := range map[string]string{
		"?action=account.create":                "account.create owner@example.com by unknown",
		"?actor=key":                            "create d by personal, create c by personal, create b by personal, create a by personal",
		"?actor=personal":                       "create d by personal, create c by personal, create b by personal, create a by personal",
		"?monitor=b":                            "create b by personal",
		"?monitor=b&action=delete":              "",
		"?actor=personal&action=create&limit=1": "create d by personal",
	} {
		if es, _ := a.auditEntries(q); summarize(es) != want {
			t.Errorf("%s: %s, want %s", q, summarize(es), want)
		}
	}
	for _, q := range []string{"?limit=0", "?limit=1001", "?before=nope", "?before=" + strings.Repeat("A", 20)} {
		if status, body, _ := a.do("GET", "/api/v1/audit"+q, nil); status != 400 || body["code"] != "invalid_request" {
			t.Errorf("%s: %d %v", q, status, body)
		}
	}
	writeOnly := createKey(t, a.srv, a.acct.ID, "write")
	if status, body, _ := a.doKey("GET", "/api/v1/audit", writeOnly, nil); status != 403 {
		t.Errorf("without read scope: %d %v", status, body)
	}
}
