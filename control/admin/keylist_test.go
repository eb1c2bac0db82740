package admin_test

import (
	"bytes"
	"net/http"
	"testing"

	"lookout/control/controltest"
)

// GET /admin/v1/accounts/{id}/keys lists the keys with when each was made
// and last used, never a secret or a hash.
func TestListKeys(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	path := "/admin/v1/accounts/" + acct.ID + "/keys"
	var created createdKey
	do(t, srv, "POST", path, `{"type":"management","name":"grafana","scopes":["read"]}`).decode(t, &created)
	srv.MarkKeyUsed(t, acct.ManagementKey)

	r := do(t, srv, "GET", path, "")
	r.wantStatus(t, http.StatusOK)
	var got struct {
		Keys []struct {
			ID, Name, Type string
			Scopes         []string
			CreatedAt      string  `json:"created_at"`
			LastUsedAt     *string `json:"last_used_at"`
		}
	}
	r.decode(t, &got)
	byName := map[string]int{}
	for i, k := range got.Keys {
		byName[k.Name] = i
		if k.CreatedAt != "2026-03-15T12:30:00Z" {
			t.Errorf("key %s created %q", k.Name, k.CreatedAt)
		}
	}
	personal, grafana, ingest := got.Keys[byName["personal"]], got.Keys[byName["grafana"]], got.Keys[byName["default"]]
	if len(got.Keys) != 3 || personal.LastUsedAt == nil || *personal.LastUsedAt != "2026-03-15T12:30:00Z" ||
		grafana.LastUsedAt != nil || grafana.ID != created.ID || grafana.Type != "management" || len(grafana.Scopes) != 1 ||
		ingest.Type != "ingest" || ingest.LastUsedAt != nil {
		t.Fatalf("keys %+v", got.Keys)
	}
	if bytes.Contains(r.body, []byte("mk_")) || bytes.Contains(r.body, []byte("hash")) {
		t.Errorf("the list shows secrets: %s", r.body)
	}
	do(t, srv, "GET", "/admin/v1/accounts/00000000-0000-0000-0000-000000000000/keys", "").wantError(t, http.StatusNotFound, "not_found", "account ")
	srv.Cluster.FailReads(noLeader())
	do(t, srv, "GET", path, "").wantStatus(t, http.StatusServiceUnavailable)
	do(t, srv, "GET", path+"?stale=true", "").wantStatus(t, http.StatusOK)
}
