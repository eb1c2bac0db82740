package e2e

import (
	"bufio"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDevNodePanelShowsPingsLive is "done" for the web panel: lookout
// control --dev, sign in with the printed account, open the monitor's live
// stream, and a lookout ping arrives on it.
func TestDevNodePanelShowsPingsLive(t *testing.T) {
	t.Parallel()
	args := []string{"control", "--dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--log-level", "warn"}
	node := start(t, "panel", args...)
	out := node.waitStdout("Next:", 30*time.Second)
	base := match(t, out, `web panel:\s+(http://[0-9.:]+)/`)
	password := match(t, out, `password:\s+(\S+)`)
	env := append(os.Environ(), "LOOKOUT_ADDR="+base, "LOOKOUT_INGEST_KEY="+match(t, out, `ingest key:\s+(ck_[a-z0-9]+)`))
	ping := func(status string) {
		t.Helper()
		cmd := exec.Command(binary, "ping", "nightly-backup", "--status", status)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("lookout ping: %v\n%s", err, out)
		}
	}
	ping("run")

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	get := func(path string) string {
		t.Helper()
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		return string(b)
	}
	csrf := match(t, get("/login"), `name="csrf" value="([^"]+)"`)
	resp, err := c.PostForm(base+"/login", url.Values{"email": {"demo@lookout.local"}, "password": {password}, "csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(list), "nightly-backup") {
		t.Fatalf("after sign-in: %d\n%s", resp.StatusCode, list)
	}
	monitor := regexp.MustCompile(`href="(/monitors/[0-9a-f-]+)"`).FindStringSubmatch(string(list))[1]
	live := match(t, get(monitor), `data-live="([^"]+)"`)

	req, _ := http.NewRequest("GET", base+strings.ReplaceAll(live, "&amp;", "&"), nil)
	stream := &http.Client{Jar: jar}
	resp, err = stream.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("live stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	ping("fail")
	deadline := time.After(5 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("stream ended")
			}
			if strings.HasPrefix(l, "data: ") && strings.Contains(l, `pill red`) && strings.Contains(l, `"seq":1`) {
				return
			}
		case <-deadline:
			t.Fatal("the ping did not arrive on the live stream")
		}
	}
}
