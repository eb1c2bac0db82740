package manage_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"lookout/control/admin"
	"lookout/control/manage"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// codesOf is the status_page codes of a 422 body.
func codesOf(body map[string]any) []string {
	ec, _ := body["error_codes"].(map[string]any)
	var out []string
	for _, c := range ec["status_page"].([]any) {
		out = append(out, c.(string))
	}
	return out
}

func TestStatusPageValidation(t *testing.T) {
	a := newAPI(t)
	status, created, _ := a.do("POST", "/api/v1/monitors", ping("backup", nil))
	if status != 201 {
		t.Fatalf("create: %d %v", status, created)
	}
	backup := created["uuid"].(string)
	cases := []struct {
		name  string
		body  any
		codes []string
	}{
		{"not JSON", `{"slug":`, []string{"invalid_json"}},
		{"an array", `[]`, []string{"invalid_json"}},
		{"no slug nor title", map[string]any{}, []string{"slug_invalid", "title_invalid"}},
		{"slug with capitals", map[string]any{"slug": "Acme", "title": "Acme"}, []string{"slug_invalid"}},
		{"slug ending with -", map[string]any{"slug": "acme-", "title": "Acme"}, []string{"slug_invalid"}},
		{"slug with /", map[string]any{"slug": "a/b", "title": "Acme"}, []string{"slug_invalid"}},
		{"slug too long", map[string]any{"slug": strings.Repeat("a", 65), "title": "Acme"}, []string{"slug_invalid"}},
		{"slug a number", map[string]any{"slug": 7, "title": "Acme"}, []string{"slug_invalid"}},
		{"blank title", map[string]any{"slug": "acme", "title": " \u200b "}, []string{"title_invalid"}},
		{"title with a bidi override", map[string]any{"slug": "acme", "title": "Acme \u202e"}, []string{"title_invalid"}},
		{"title too long", map[string]any{"slug": "acme", "title": strings.Repeat("t", 101)}, []string{"title_invalid"}},
		{"enabled a string", map[string]any{"slug": "acme", "title": "Acme", "enabled": "yes"}, []string{"enabled_invalid"}},
		{"unknown field", map[string]any{"slug": "acme", "title": "Acme", "theme": "dark"}, []string{"field_unknown"}},
		{"match a list", map[string]any{"slug": "acme", "title": "Acme", "match": []string{"x"}}, []string{"match_invalid"}},
		{"match of another shape", map[string]any{"slug": "acme", "title": "Acme", "match": map[string]any{"tags": "prod", "names": []string{}}},
			[]string{"match_invalid", "field_unknown"}},
		{"a monitor that is not a uuid", map[string]any{"slug": "acme", "title": "Acme", "match": map[string]any{"monitors": []string{"backup"}}}, []string{"match_invalid"}},
		{"a monitor of no one", map[string]any{"slug": "acme", "title": "Acme", "match": map[string]any{"monitors": []string{backup, "6f1c7a57-0d5c-4f2b-9d61-1f0d3c3b2a10"}}}, []string{"match_invalid"}},
		{"an empty tag", map[string]any{"slug": "acme", "title": "Acme", "match": map[string]any{"tags": []string{""}}}, []string{"match_invalid"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body, _ := a.do("PUT", "/api/v1/status-page", c.body)
			if status != 422 {
				t.Fatalf("%d %v, want 422", status, body)
			}
			got := codesOf(body)
			if !sameMembers(got, c.codes) {
				t.Fatalf("codes %v, want %v (%v)", got, c.codes, body)
			}
		})
	}
	if status, body, _ := a.do("GET", "/api/v1/status-page", nil); status != 404 || body["code"] != "not_found" {
		t.Fatalf("no page yet: %d %v", status, body)
	}
}

func sameMembers(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestStatusPagePutAndGet(t *testing.T) {
	a := newAPI(t)
	_, created, _ := a.do("POST", "/api/v1/monitors", ping("backup", nil))
	backup := created["uuid"].(string)
	body := map[string]any{"slug": "acme", "title": "Acme status", "match": map[string]any{
		"monitors": []string{strings.ToUpper(backup), backup}, "tags": []string{"prod", "db", "prod"}}}
	status, got, _ := a.do("PUT", "/api/v1/status-page", body)
	if status != 200 || got["enabled"] != true || got["slug"] != "acme" || !strings.HasSuffix(got["url"].(string), "/status/acme") {
		t.Fatalf("put: %d %v", status, got)
	}
	want := map[string]any{"monitors": []any{backup}, "tags": []any{"db", "prod"}, "projects": []any{}}
	if !reflect.DeepEqual(got["match"], want) {
		t.Fatalf("match %v, want %v (canonical: lower case, sorted, no repeats)", got["match"], want)
	}
	status, read, _ := a.do("GET", "/api/v1/status-page", nil)
	if status != 200 || !reflect.DeepEqual(read, got) {
		t.Fatalf("get: %d %v, want %v", status, read, got)
	}
	// What GET answers can be PUT back (url is ignored).
	read["enabled"] = false
	if status, again, _ := a.do("PUT", "/api/v1/status-page", read); status != 200 || again["enabled"] != false {
		t.Fatalf("put back: %d %v", status, again)
	}
	// Another account cannot take the slug: slug_taken.
	other, err := a.srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "other@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	status, refused, _ := a.doKey("PUT", "/api/v1/status-page", other.ManagementKey, map[string]any{"slug": "acme", "title": "Mine"})
	if status != 422 || !sameMembers(codesOf(refused), []string{"slug_taken"}) {
		t.Fatalf("taken: %d %v", status, refused)
	}
	// A read-only key may read, not write.
	readKey := namedKey(t, a, "read")
	if status, _, _ := a.doKey("GET", "/api/v1/status-page", readKey, nil); status != 200 {
		t.Fatalf("read key GET: %d", status)
	}
	if status, body, _ := a.doKey("PUT", "/api/v1/status-page", readKey, read); status != 403 || body["error_code"] != "insufficient_scope" {
		t.Fatalf("read key PUT: %d %v", status, body)
	}
}

func TestAccountHasABadgeKey(t *testing.T) {
	a := newAPI(t)
	status, acct, _ := a.do("GET", "/api/v1/account", nil)
	key, _ := acct["badge_key"].(string)
	if status != 200 || !strings.HasPrefix(key, "bk_") || len(key) < 3+26 {
		t.Fatalf("account: %d %v", status, acct)
	}
	// The same key at every read.
	if _, again, _ := a.do("GET", "/api/v1/account", nil); again["badge_key"] != key {
		t.Fatalf("badge key changed: %v, then %v", key, again["badge_key"])
	}
	m := manageAPI(a)
	fresh, err := m.RegenerateBadgeKey(context.Background(), a.acct.ID)
	if err != nil || fresh == key || !strings.HasPrefix(fresh, "bk_") {
		t.Fatalf("regenerate: %q %v", fresh, err)
	}
	if _, again, _ := a.do("GET", "/api/v1/account", nil); again["badge_key"] != fresh {
		t.Fatalf("after regenerating: %v, want %v", again["badge_key"], fresh)
	}
}

// manageAPI is a second Management API over a's store, for its Go calls.
func manageAPI(a *api) *manage.API {
	return manage.New(manage.Options{Cluster: a.srv.Cluster, State: a.srv.Store})
}

// namedKey adds a management key of a's account with scopes.
func namedKey(t *testing.T, a *api, scopes ...string) string {
	t.Helper()
	secret, hash, _ := apikey.New(apikey.Management)
	res, err := a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_CreateKey{CreateKey: &raftv1.CreateKey{Key: &raftv1.Key{
		Id: uuid.NewString(), AccountId: a.acct.ID, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "ci", Scopes: scopes, Hash: hash,
	}}}})
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("create key: %v %v", res, err)
	}
	return secret
}
