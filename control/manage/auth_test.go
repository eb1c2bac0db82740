package manage_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"lookout/cluster"
)

// TestAuthorizationHeader: the Bearer scheme is case-insensitive and the
// header must be there exactly once, as on the Ingest API.
func TestAuthorizationHeader(t *testing.T) {
	a := newAPI(t)
	key := a.acct.ManagementKey
	for _, tc := range []struct {
		name   string
		values []string
		status int
	}{
		{"Bearer", []string{"Bearer " + key}, 200},
		{"bearer", []string{"bearer " + key}, 200},
		{"BEARER", []string{"BEARER " + key}, 200},
		{"repeated", []string{"Bearer " + key, "Bearer " + key}, 401},
		{"repeated, one bad", []string{"Bearer " + key, "Bearer mk_other"}, 401},
		{"other scheme", []string{"Basic " + key}, 401},
		{"no scheme", []string{key}, 401},
		{"two spaces", []string{"Bearer  " + key}, 401},
		{"missing", nil, 401},
	} {
		req, _ := http.NewRequest("GET", a.url+"/api/v1/monitors", nil)
		for _, v := range tc.values {
			req.Header.Add("Authorization", v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || (tc.status == 401 && body["code"] != "unauthenticated") {
			t.Errorf("%s: %d %v", tc.name, resp.StatusCode, body)
		}
	}
}

// TestUnknownKeyIsCheckedWithTheLeader: a key this node does not hold is
// looked up again after a consistent read; when the leader cannot be
// asked the answer is 503 with Retry-After, not 401.
func TestUnknownKeyIsCheckedWithTheLeader(t *testing.T) {
	a := newAPI(t)
	reads := a.srv.Cluster.Reads()
	if status, body, _ := a.doKey("GET", "/api/v1/monitors", "mk_notakey", nil); status != 401 || body["code"] != "unauthenticated" {
		t.Fatalf("unknown key: %d %v", status, body)
	}
	if a.srv.Cluster.Reads() != reads+1 {
		t.Fatalf("%d consistent reads for an unknown key, want 1", a.srv.Cluster.Reads()-reads)
	}
	a.srv.Cluster.FailReads(fmt.Errorf("read index: %w", cluster.ErrNoLeader))
	status, body, h := a.doKey("GET", "/api/v1/monitors", "mk_notakey", nil)
	if status != 503 || body["code"] != "unavailable" || h.Get("Retry-After") == "" {
		t.Fatalf("unknown key without a leader: %d %v Retry-After %q", status, body, h.Get("Retry-After"))
	}
	// A key the node holds needs no leader.
	if status, _, _ := a.do("GET", "/api/v1/monitors?stale=true", nil); status != 200 {
		t.Fatalf("known key without a leader: %d", status)
	}
}
