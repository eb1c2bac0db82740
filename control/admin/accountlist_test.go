package admin_test

import (
	"fmt"
	"net/http"
	"sort"
	"testing"

	"lookout/control/controltest"
)

// GET /admin/v1/accounts pages through every account in id order.
func TestListAccounts(t *testing.T) {
	srv := controltest.NewServer(t)
	var want []string
	for i := range 5 {
		want = append(want, mustCreateAccount(t, srv, fmt.Sprintf("ops%d@example.com", i)).ID)
	}
	sort.Strings(want)

	type page struct {
		Accounts []struct {
			ID, Email string
			Plan      map[string]any
			CreatedAt string `json:"created_at"`
		}
		NextCursor *string `json:"next_cursor"`
	}
	var got []string
	path := "/admin/v1/accounts?limit=2"
	for pages := 0; ; pages++ {
		if pages == 4 {
			t.Fatalf("more than 3 pages of 2 for 5 accounts: %v", got)
		}
		var p page
		do(t, srv, "GET", path, "").decode(t, &p)
		for _, a := range p.Accounts {
			if a.Email == "" || a.Plan["name"] != "default" || a.CreatedAt != "2026-03-15T12:30:00Z" {
				t.Errorf("account %+v", a)
			}
			got = append(got, a.ID)
		}
		if p.NextCursor == nil {
			break
		}
		path = "/admin/v1/accounts?limit=2&cursor=" + *p.NextCursor
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("listed %v, want %v", got, want)
	}

	// The default page holds them all; consistent unless stale=true.
	reads := srv.Cluster.Reads()
	var all page
	r := do(t, srv, "GET", "/admin/v1/accounts", "")
	r.wantStatus(t, http.StatusOK)
	r.decode(t, &all)
	if len(all.Accounts) != 5 || all.NextCursor != nil || srv.Cluster.Reads() != reads+1 {
		t.Errorf("%d accounts, cursor %v, %d reads", len(all.Accounts), all.NextCursor, srv.Cluster.Reads()-reads)
	}
	do(t, srv, "GET", "/admin/v1/accounts?stale=true", "").wantStatus(t, http.StatusOK)
	if srv.Cluster.Reads() != reads+1 {
		t.Error("a stale list made a consistent read")
	}

	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "cursor=!!"} {
		do(t, srv, "GET", "/admin/v1/accounts?"+q, "").wantError(t, http.StatusBadRequest, "invalid_request", "invalid field: ")
	}
	doToken(t, srv, "GET", "/admin/v1/accounts", "", "").wantStatus(t, http.StatusUnauthorized)
}
