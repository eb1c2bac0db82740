package e2e

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDevNodeBadgesAndStatusPage: lookout control --dev, a lookout ping,
// then the account's badge and a status page read without any key, and a
// disabled page gone.
func TestDevNodeBadgesAndStatusPage(t *testing.T) {
	t.Parallel()
	args := []string{"control", "--dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--log-level", "warn"}
	node := start(t, "public", args...)
	out := node.waitStdout("Next:", 30*time.Second)
	base := match(t, out, `web panel:\s+(http://[0-9.:]+)/`)
	mk := match(t, out, `management key:\s+(mk_[a-z0-9]+)`)
	cmd := exec.Command(binary, "ping", "nightly-backup", "--status", "complete")
	cmd.Env = append(os.Environ(), "LOOKOUT_ADDR="+base, "LOOKOUT_INGEST_KEY="+match(t, out, `ingest key:\s+(ck_[a-z0-9]+)`))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lookout ping: %v\n%s", err, out)
	}
	call := func(method, path, key, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, acct := call("GET", "/api/v1/account", mk, "")
	badge := match(t, acct, `"badge_key":"(bk_[a-z2-7]+)"`)
	if st, body := call("GET", "/badge/"+badge+"/ping/nightly-backup.json", "", ""); st != 200 || body != `{"name":"nightly-backup","kind":"ping","status":"up"}`+"\n" {
		t.Fatalf("badge: %d %s", st, body)
	}
	if st, _ := call("GET", "/badge/bk_wrong/ping/nightly-backup.svg", "", ""); st != 404 {
		t.Fatalf("a wrong key: %d", st)
	}
	if st, body := call("PUT", "/api/v1/status-page", mk, `{"slug":"demo","title":"Demo status"}`); st != 200 {
		t.Fatalf("put: %d %s", st, body)
	}
	if st, body := call("GET", "/status/demo", "", ""); st != 200 || !strings.Contains(body, ">nightly-backup<") || !strings.Contains(body, "All systems operational") {
		t.Fatalf("status page: %d %s", st, body)
	}
	call("PUT", "/api/v1/status-page", mk, `{"slug":"demo","title":"Demo status","enabled":false}`)
	if st, _ := call("GET", "/status/demo", "", ""); st != 404 {
		t.Fatalf("a disabled page: %d", st)
	}
}
