package ingest

import (
	"context"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

const pingBody = `{"event_type":"ping","monitor":"backup","status":"run"}`

func TestAuth(t *testing.T) {
	cl := &cannedCluster{}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount(bigBurst)
	other := e.newAccount(bigBurst)
	revoked := e.newAccount(bigBurst)
	// The key works until it is revoked.
	e.post(revoked.IngestKey, pingBody).want(t, 200, success)
	keys, err := e.admin.Store.Keys(revoked.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.GetType() != raftv1.KeyType_KEY_TYPE_INGEST {
			continue
		}
		if _, err := e.admin.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RevokeKey{
			RevokeKey: &raftv1.RevokeKey{AccountId: revoked.ID, KeyId: k.GetId()},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, method, path string
		headers            []string
		ok                 bool
		account            string
	}{
		{"POST header", "POST", "/ping", []string{"Authorization", "Bearer " + acct.IngestKey}, true, acct.ID},
		{"POST header, scheme in any case", "POST", "/ping", []string{"Authorization", "bearer " + acct.IngestKey}, true, acct.ID},
		{"POST query", "POST", "/ping?api_key=" + other.IngestKey, nil, true, other.ID},
		{"GET header", "GET", "/ping/backup?status=run", []string{"Authorization", "Bearer " + acct.IngestKey}, true, acct.ID},
		{"GET query", "GET", "/ping/backup?status=run&api_key=" + other.IngestKey, nil, true, other.ID},
		{"header wins over query", "GET", "/ping/backup?status=run&api_key=" + other.IngestKey,
			[]string{"Authorization", "Bearer " + acct.IngestKey}, true, acct.ID},
		{"missing", "POST", "/ping", nil, false, ""},
		{"missing on GET", "GET", "/ping/backup?status=run", nil, false, ""},
		{"empty api_key", "GET", "/ping/backup?status=run&api_key=", nil, false, ""},
		{"malformed header, valid query key", "GET", "/ping/backup?status=run&api_key=" + acct.IngestKey,
			[]string{"Authorization", acct.IngestKey}, false, ""},
		{"basic scheme, valid query key", "POST", "/ping?api_key=" + acct.IngestKey,
			[]string{"Authorization", "Basic " + acct.IngestKey}, false, ""},
		{"empty header, valid query key", "POST", "/ping?api_key=" + acct.IngestKey,
			[]string{"Authorization", ""}, false, ""},
		{"bearer without token, valid query key", "POST", "/ping?api_key=" + acct.IngestKey,
			[]string{"Authorization", "Bearer "}, false, ""},
		{"invalid header key, valid query key", "GET", "/ping/backup?status=run&api_key=" + acct.IngestKey,
			[]string{"Authorization", "Bearer ck_notakey"}, false, ""},
		{"invalid query key", "POST", "/ping?api_key=ck_notakey", nil, false, ""},
		{"management key in header", "POST", "/ping", []string{"Authorization", "Bearer " + acct.ManagementKey}, false, ""},
		{"management key in query", "GET", "/ping/backup?status=run&api_key=" + acct.ManagementKey, nil, false, ""},
		{"revoked key", "POST", "/ping", []string{"Authorization", "Bearer " + revoked.IngestKey}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(cl.events())
			body := ""
			if tc.method == "POST" {
				body = pingBody
			}
			r := e.do(tc.method, tc.path, body, tc.headers...)
			if !tc.ok {
				r.wantError(t, 401, "unauthorized")
				if len(cl.events()) != before {
					t.Fatal("an unauthorized event was applied")
				}
				if r.header.Get("X-Quota-State") != "" {
					t.Error("quota headers before the account is known")
				}
				return
			}
			r.want(t, 200, success)
			checkLastEvent(t, cl, tc.account, nil)
		})
	}
}

// TestAuthBeforeValidation: a request without a key is 401 even when its
// body is invalid, so nothing about the API leaks to strangers.
func TestAuthBeforeValidation(t *testing.T) {
	e := newEnv(t, &cannedCluster{}, BatchSettings{})
	e.do("POST", "/ping", "not json").wantError(t, 401, "unauthorized")
	e.do("GET", "/ping/a.b", "").wantError(t, 401, "unauthorized")
}

func TestRoutes(t *testing.T) {
	e := newEnv(t, &cannedCluster{}, BatchSettings{})
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/ping", 405, "POST"},
		{"PUT", "/ping", 405, "POST"},
		{"POST", "/ping/backup", 405, "GET, HEAD"},
		{"DELETE", "/ping/backup", 405, "GET, HEAD"},
		{"GET", "/ping/a/b", 404, ""},
	} {
		r := e.do(tc.method, tc.path, "")
		if r.status != tc.status || r.header.Get("Allow") != tc.allow || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d Allow %q %s", tc.method, tc.path, r.status, r.header.Get("Allow"), r.body)
		}
	}
}
