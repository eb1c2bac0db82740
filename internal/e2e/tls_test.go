package e2e

import (
	"crypto/tls"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"lookout/internal/tlsconf"
	"lookout/internal/tlsconf/tlstest"
)

// TestDevNodeServesHTTPSAndReloadsOnSIGHUP runs lookout control --dev
// with --tls-cert/--tls-key/--tls-ca: /health over HTTPS verified against
// the CA, the CLI with --ca-file (and LOOKOUT_CA_FILE), and a renewed
// certificate served after SIGHUP.
func TestDevNodeServesHTTPSAndReloadsOnSIGHUP(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "e2e CA")
	files := ca.Node(t, "first")
	p := start(t, "tls", "control", "--dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--log-level", "warn",
		"--tls-cert", files.Cert, "--tls-key", files.Key, "--tls-ca", files.CA)
	out := p.waitStdout("Next:", 30*time.Second)
	base := match(t, out, `is up at (https://[0-9.:]+)`)
	adminToken := match(t, out, `admin token:\s+(adm_[a-z0-9]+)`)
	accountID := match(t, out, `account id:\s+(\S+)`)

	pool, err := tlsconf.LoadPool(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	// health answers /health on a new connection and the name on the
	// certificate the node presented.
	health := func() (int, string) {
		t.Helper()
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(base + "/health")
		if err != nil {
			t.Fatalf("GET /health: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.TLS.PeerCertificates[0].Subject.CommonName
	}
	// A node just started may answer 503 (catching up) for a moment.
	code, cn := health()
	for deadline := time.Now().Add(10 * time.Second); code != http.StatusOK && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		code, cn = health()
	}
	if code != http.StatusOK || cn != "first" {
		t.Fatalf("/health: %d from %q, want 200 from first", code, cn)
	}

	// The CLI verifies the node with --ca-file or LOOKOUT_CA_FILE, and
	// refuses it without.
	admin := func(extraEnv string, args ...string) ([]byte, error) {
		cmd := exec.Command(binary, append([]string{"admin", "account", "get", accountID, "--addr", base, "--admin-token", adminToken}, args...)...)
		cmd.Env = append(os.Environ(), extraEnv)
		return cmd.CombinedOutput()
	}
	if out, err := admin("", "--ca-file", ca.File); err != nil {
		t.Fatalf("lookout admin --ca-file: %v\n%s", err, out)
	}
	if out, err := admin("LOOKOUT_CA_FILE=" + ca.File); err != nil {
		t.Fatalf("lookout admin with LOOKOUT_CA_FILE: %v\n%s", err, out)
	}
	if out, err := admin(""); err == nil {
		t.Fatalf("lookout admin without the CA trusted the node:\n%s", out)
	}
	ping := exec.Command(binary, "ping", "tls-job", "--status", "complete", "--addr", base, "--ca-file", ca.File, "--ingest-key", match(t, out, `ingest key:\s+(ck_[a-z0-9]+)`))
	if out, err := ping.CombinedOutput(); err != nil {
		t.Fatalf("lookout ping --ca-file: %v\n%s", err, out)
	}

	// A renewed certificate in the same files is served after SIGHUP.
	renewed := ca.Node(t, "second")
	for _, f := range [][2]string{{renewed.Cert, files.Cert}, {renewed.Key, files.Key}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, cn := health()
		if cn == "second" && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGHUP the node still serves %q (%d)", cn, code)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
}
