package manage_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/manage"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// A management key's first request records its use through raft; the
// requests after it, within the hour, write nothing; a failed record does
// not fail the request.
func TestManagementKeyUseIsRecordedCoarsely(t *testing.T) {
	srv := controltest.NewServer(t)
	acct, err := srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := srv.Store.KeyByHash(apikey.Hash(acct.ManagementKey))
	mux := http.NewServeMux()
	manage.New(manage.Options{Cluster: srv.Cluster, State: srv.Store, Now: func() time.Time { return srv.Now }}).Register(mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	a := &api{t: t, srv: srv, url: hs.URL, acct: acct}

	var recorded int
	srv.Cluster.BeforeApply(func(c *raftv1.Command) {
		if c.GetRecordKeyUsed() != nil {
			recorded++
		}
	})
	if code, _, _ := a.do("GET", "/api/v1/account", nil); code != 200 {
		t.Fatalf("GET account: %d", code)
	}
	used, err := srv.Store.KeysLastUsed(acct.ID)
	if err != nil || used[key.GetId()] != srv.Now.UnixMilli() || recorded != 1 {
		t.Fatalf("after the first request: %v %v, %d records", used, err, recorded)
	}
	for range 5 {
		a.do("GET", "/api/v1/monitors", nil)
	}
	if recorded != 1 {
		t.Fatalf("%d records after six requests in a minute, want 1", recorded)
	}

	// Another key whose record fails: the request is answered all the same.
	other, err := srv.API.CreateKey(context.Background(), acct.ID, admin.KeyRequest{Type: "management", Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	srv.Cluster.FailApply(context.DeadlineExceeded)
	if code, _, _ := a.doKey("GET", "/api/v1/account", other.Key, nil); code != 200 {
		t.Fatalf("GET account while records fail: %d", code)
	}
}
