package panel_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestCheckFormInABrowser makes a tcp_check in headless Chromium from the
// kind tabs of a new monitor, as a user would: a refused port is marked
// next to its field with what was typed kept, and the check is made with
// a line typed in Send sent as CR LF. Then the http_check form's options:
// a header line without a colon is refused next to the headers, and the
// certificate warning is there.
func TestCheckFormInABrowser(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	ctx := newBrowser(t)
	signInBrowser(t, ctx, n.URL, a)

	t.Run("a tcp_check", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "the tcp form, a wrong port",
			chromedp.Click(chromedp.CSS(`a[href="/monitors/new"]`)),
			chromedp.WaitVisible(chromedp.CSS(`nav.tabs`)),
			chromedp.Click(chromedp.CSS(`nav.tabs a[href="/monitors/new?kind=tcp_check"]`)),
			chromedp.WaitVisible(chromedp.ID(`f-config-host`)),
			chromedp.SendKeys(chromedp.ID(`f-name`), "redis"),
			chromedp.SendKeys(chromedp.ID(`f-config-host`), "redis.example.com"),
			chromedp.SendKeys(chromedp.ID(`f-config-port`), "637900"),
			chromedp.SendKeys(chromedp.ID(`f-config-send`), "PING\n"),
			chromedp.SendKeys(chromedp.ID(`f-config-expect`), "+PONG"),
			chromedp.SendKeys(chromedp.ID(`f-schedule`), "30s"),
			chromedp.Click(chromedp.CSS(`#monitor-form button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-field="config.port"] .field-error[data-code=port_invalid]`)),
		)
		if got := value(t, ctx, chromedp.Value(chromedp.ID(`f-config-host`))); got != "redis.example.com" {
			t.Fatalf("the refused form lost the host: %q", got)
		}
		run(t, ctx, 10*time.Second, "fix the port",
			chromedp.SetValue(chromedp.ID(`f-config-port`), "6379"),
			chromedp.Click(chromedp.CSS(`#monitor-form button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.banner.green`)),
		)
		if h := value(t, ctx, chromedp.Text(chromedp.CSS(`h1`))); !strings.HasPrefix(h, "redis") {
			t.Fatalf("heading %q", h)
		}
		m, err := n.Store.Monitor(a.ID, n.monitorUUID(a, "redis"))
		if err != nil {
			t.Fatal(err)
		}
		c := m.GetConfig()
		if m.GetKind() != "tcp_check" || c.GetHost() != "redis.example.com" || c.GetPort() != 6379 || c.GetSend() != "PING\r\n" || c.GetExpect() != "+PONG" || m.GetSchedule() != "30s" {
			t.Fatalf("stored %v: %v", m.GetKind(), c)
		}
	})

	t.Run("http_check options", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "a header line without a colon",
			chromedp.Navigate(n.URL+"/monitors/new?kind=http_check"),
			chromedp.WaitVisible(chromedp.ID(`f-config-headers`)),
			chromedp.SendKeys(chromedp.ID(`f-name`), "orders"),
			chromedp.SendKeys(chromedp.ID(`f-config-url`), "https://orders.example.com/health"),
			chromedp.SendKeys(chromedp.ID(`f-schedule`), "1m"),
			chromedp.SendKeys(chromedp.ID(`f-config-headers`), "Accept: application/json\nBearer t0ken"),
			chromedp.SendKeys(chromedp.ID(`f-config-json-path`), `$.status = "ok"`),
			chromedp.Click(chromedp.CSS(`#monitor-form button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-field="config.headers"] .field-error[data-code=header_invalid]`)),
		)
		if msg := value(t, ctx, chromedp.Text(chromedp.CSS(`[data-field="config.headers"] .field-error`))); !strings.Contains(msg, "line 2") || strings.Contains(msg, "t0ken") {
			t.Fatalf("header problem: %q", msg)
		}
		if on := value(t, ctx, chromedp.Evaluate[bool](`document.getElementById("f-config-follow-redirects").checked`)); !on {
			t.Fatal("follow redirects is not ticked by default")
		}
		if w := value(t, ctx, chromedp.Text(chromedp.CSS(`[data-field="config.tls_skip_verify"] .warning`))); !strings.Contains(w, "impostor certificate passes") {
			t.Fatalf("the warning of tls_skip_verify: %q", w)
		}
		run(t, ctx, 10*time.Second, "fix the header",
			chromedp.SetValue(chromedp.ID(`f-config-headers`), "Accept: application/json\nAuthorization: Bearer t0ken"),
			chromedp.Click(chromedp.CSS(`#monitor-form button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.banner.green`)),
		)
		headers, _, _ := n.secretsOf(a, n.monitorUUID(a, "orders"))
		if headers["Authorization"] != "Bearer t0ken" || headers["Accept"] != "application/json" {
			t.Fatalf("stored headers %v", headers)
		}
	})
}
