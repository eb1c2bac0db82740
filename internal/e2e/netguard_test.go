package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lookout/internal/client"
)

// TestPrivateTargetsRefused runs lookout control --dev
// --allow-private-targets=false, as a node of a shared service runs by
// default: http_checks without regions of a site on loopback (by address
// and by a name that resolves to it) fail at once with "target not
// allowed:", a webhook channel at a loopback receiver is refused by its
// test send with the same reason, and neither server sees a request.
func TestPrivateTargetsRefused(t *testing.T) {
	t.Parallel()
	var siteHits, hookHits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		siteHits.Add(1)
		_, _ = w.Write([]byte("internal admin page"))
	}))
	defer site.Close()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hookHits.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("internal error details"))
	}))
	defer hook.Close()

	dev := start(t, "dev", "control", "--dev", "--allow-private-targets=false", "--data-dir", t.TempDir(),
		"--http-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--log-level", "warn")
	out := dev.waitStdout("Next:", 30*time.Second)
	if !strings.Contains(out, "private targets: refused") {
		t.Errorf("the dev node does not say private targets are refused:\n%s", out)
	}
	base := match(t, out, `is up at (http://[0-9.:]+)`)
	adminToken := match(t, out, `admin token:\s+(adm_[a-z0-9]+)`)
	accountID := match(t, out, `account id:\s+(\S+)`)
	manageKey := match(t, out, `management key:\s+(mk_\S+)`)
	ctx := ctxT(t, time.Minute)

	// The channel's test send: the reason, no body, nothing received.
	admin := client.NewAdmin(base, adminToken, nil)
	cfg, _ := json.Marshal(map[string]string{"url": hook.URL + "/hook"})
	ch, err := admin.CreateChannel(ctx, accountID, client.CreateChannelRequest{Type: "webhook", Name: "hook", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	_, err = admin.TestChannel(ctx, accountID, ch.ID)
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway || ae.Code != "delivery_failed" ||
		ae.Message != "target not allowed: 127.0.0.1 is a loopback address" {
		t.Fatalf("test send: %v, want 502 delivery_failed \"target not allowed: 127.0.0.1 is a loopback address\"", err)
	}

	// Checks without regions: one attempt each, refused.
	_, port, _ := net.SplitHostPort(site.Listener.Addr().String())
	manage := client.NewManage(base, manageKey, nil)
	for i, url := range []string{site.URL + "/admin", "http://localhost:" + port + "/admin"} {
		mf, err := manage.CreateMonitorJSON(ctx, json.RawMessage(fmt.Sprintf(`{"manifest_version": 1, "kind": "http_check",
			"name": "internal-%d", "schedule": "1h", "config": {"url": %q, "expected_content": "admin"}}`, i, url)))
		if err != nil {
			t.Fatal(err)
		}
		ex := finalExecution(ctx, t, base, manageKey, mf.UUID)
		if ex.Status != "failed" || ex.Attempts != 1 || !strings.HasPrefix(ex.Error, "target not allowed: 127.0.0.1 is a loopback address") {
			t.Errorf("%s: execution %+v", url, ex)
		}
	}
	if n := siteHits.Load(); n != 0 {
		t.Errorf("the site got %d requests", n)
	}
	if n := hookHits.Load(); n != 0 {
		t.Errorf("the webhook receiver got %d requests", n)
	}
}

// verdict is the part of an execution TestPrivateTargetsRefused reads.
type verdict struct {
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
}

// finalExecution waits for the check uuid's first execution with a
// verdict (success or failed) and returns it.
func finalExecution(ctx context.Context, t *testing.T, base, key, uuid string) verdict {
	t.Helper()
	for {
		code, body := get(t, base+"/api/v1/monitors/"+uuid+"/executions?limit=10", "Bearer "+key)
		var page struct{ Executions []verdict }
		if code != http.StatusOK || json.Unmarshal([]byte(body), &page) != nil {
			t.Fatalf("executions: %d %s", code, body)
		}
		for _, ex := range page.Executions {
			if ex.Status == "success" || ex.Status == "failed" {
				return ex
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no verdict for check %s: %s", uuid, body)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
