package panel_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds the browser: LOOKOUT_CHROMIUM, else chromium (Debian's
// package, `make chromium`) or Chrome on the PATH. Without one the test
// is skipped, except in CI (CI set), where it fails.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("LOOKOUT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found (install it with `make chromium`, or set LOOKOUT_CHROMIUM to its path)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI is set, so the browser tests must run")
	}
	t.Skip(msg)
	return ""
}

// newBrowser starts one headless Chromium for the whole test and returns a
// tab's context.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoSandbox, // tests may run as root in a container
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// signInBrowser signs a in through the sign-in page of the node at url,
// as a user would, and waits for the monitor list.
func signInBrowser(t *testing.T, ctx context.Context, url string, a account) {
	t.Helper()
	run(t, ctx, 10*time.Second, "sign in",
		chromedp.Navigate(url+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), a.Email),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), a.Password),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.ID(`counts`)),
	)
}

// run runs steps with a time limit, failing the test with what.
func run(t *testing.T, ctx context.Context, limit time.Duration, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		loc, _ := chromedp.Run(dctx, chromedp.Location())
		body, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("%s: %v\nat %s:\n%s", what, err, loc, body)
	}
}

// loaded waits up to 10 s for a page whose address has query and that
// has loaded (evaluations fail while the page navigates).
func loaded(t *testing.T, ctx context.Context, query string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		ok, err := chromedp.Run(sctx, chromedp.Evaluate[bool](`location.search.includes(`+strconv.Quote(query)+`) && document.readyState === "complete"`))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("no loaded page with %s in its address: %v", query, err)
		}
	}
}

func value[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestInABrowser drives the panel in headless Chromium: sign in, the list,
// a monitor, a ping arriving live, a key shown once, a delete confirmed by
// typing the name. One browser for all of it.
func TestInABrowser(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"nightly-backup","status":"run"}`)
	n.ping(a, `{"event_type":"ping","monitor":"nightly-backup","status":"complete","duration":42}`)
	n.ping(a, `{"event_type":"ping","monitor":"etl","status":"fail","exit_code":1}`)
	id := n.monitorUUID(a, "nightly-backup")
	ctx := newBrowser(t)

	t.Run("sign in", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "sign in",
			chromedp.Navigate(n.URL+"/"),
			chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name=email]`), a.Email),
			chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "wrong password"),
			chromedp.Submit(chromedp.CSS(`input[name=password]`)),
			chromedp.WaitVisible(chromedp.CSS(`p.error`)),
		)
		if msg := value(t, ctx, chromedp.Text(chromedp.CSS(`p.error`))); !strings.Contains(msg, "Wrong e-mail or password") {
			t.Fatalf("wrong password: %q", msg)
		}
		run(t, ctx, 10*time.Second, "sign in",
			chromedp.SetValue(chromedp.CSS(`input[name=email]`), a.Email),
			chromedp.SendKeys(chromedp.CSS(`input[name=password]`), a.Password),
			chromedp.Submit(chromedp.CSS(`input[name=password]`)),
			chromedp.WaitVisible(chromedp.ID(`counts`)),
		)
	})

	t.Run("see the list", func(t *testing.T) {
		if title := value(t, ctx, chromedp.Title()); title != "(1 down) Monitors · Lookout" {
			t.Fatalf("title %q", title)
		}
		list := value(t, ctx, chromedp.Text(chromedp.CSS(`table.monitors`)))
		if !strings.Contains(list, "nightly-backup") || !strings.Contains(list, "etl") {
			t.Fatalf("list: %q", list)
		}
	})

	t.Run("the list refreshes itself", func(t *testing.T) {
		// The list's stream is open once the page has loaded; a new
		// monitor then shows up (the page refetches at most every 2 s).
		run(t, ctx, 5*time.Second, "list stream", chromedp.Sleep(300*time.Millisecond))
		n.ping(a, `{"event_type":"ping","monitor":"fresh-job","status":"fail"}`)
		run(t, ctx, 6*time.Second, "the new monitor in the list",
			chromedp.WaitVisible(chromedp.CSS(`table.monitors a[href^="/monitors/"][data-name="fresh-job"]`)))
		if title := value(t, ctx, chromedp.Title()); title != "(2 down) Monitors · Lookout" {
			t.Fatalf("title after refresh %q", title)
		}
	})

	t.Run("open a monitor", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "open",
			chromedp.Click(chromedp.CSS(`a[href="/monitors/`+id+`"]`)),
			chromedp.WaitVisible(chromedp.ID(`events`)),
			chromedp.WaitVisible(chromedp.CSS(`svg.chart rect`)),
		)
		if h := value(t, ctx, chromedp.Text(chromedp.CSS(`h1`))); !strings.HasPrefix(h, "nightly-backup") {
			t.Fatalf("heading %q", h)
		}
	})

	t.Run("a ping appears live", func(t *testing.T) {
		// The stream is open once the live dot turns on.
		run(t, ctx, 10*time.Second, "stream open", chromedp.WaitVisible(chromedp.CSS(`#live-state.on`)))
		rows := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#events tr").length`))
		n.ping(a, `{"event_type":"ping","monitor":"nightly-backup","status":"fail","message":"disk full"}`)
		run(t, ctx, 2*time.Second, "the new event within 2 s",
			chromedp.WaitVisible(chromedp.CSS(`#events tr[data-seq="`+strconv.Itoa(rows)+`"]`)))
		if first := value(t, ctx, chromedp.Text(chromedp.CSS(`#events tr`))); !strings.Contains(first, "disk full") || !strings.Contains(first, "fail") {
			t.Fatalf("newest row %q", first)
		}
		run(t, ctx, 2*time.Second, "status turns failed",
			chromedp.WaitVisible(chromedp.CSS(`#status .pill.red`)))
	})

	t.Run("create a key, shown once", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "create key",
			chromedp.Navigate(n.URL+"/keys"),
			chromedp.WaitVisible(chromedp.CSS(`input[name=name]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "deploy"),
			chromedp.Click(chromedp.CSS(`input[name=scope][value=delete]`)),
			chromedp.Submit(chromedp.CSS(`input[name=name]`)),
			chromedp.WaitVisible(chromedp.ID(`secret`)),
		)
		secret := value(t, ctx, chromedp.Text(chromedp.ID(`secret`)))
		if !strings.HasPrefix(secret, "mk_") {
			t.Fatalf("secret %q", secret)
		}
		run(t, ctx, 10*time.Second, "reload keys",
			chromedp.Navigate(n.URL+"/keys"),
			chromedp.WaitVisible(chromedp.CSS(`table.keys`)),
		)
		html := value(t, ctx, chromedp.OuterHTML(chromedp.CSS(`html`)))
		if strings.Contains(html, secret) || !strings.Contains(html, "deploy") || !strings.Contains(html, "read, write<") {
			t.Fatalf("keys page after creating: secret shown again, or key missing:\n%s", html)
		}
	})

	t.Run("revoke a key through the confirmation", func(t *testing.T) {
		keys, _ := n.Store.Keys(a.ID)
		var id string
		for _, k := range keys {
			if k.GetName() == "deploy" {
				id = k.GetId()
			}
		}
		run(t, ctx, 10*time.Second, "ask",
			chromedp.Navigate(n.URL+"/keys"),
			chromedp.Click(chromedp.CSS(`input[name=revoke][value="`+id+`"] + button`)),
			chromedp.WaitVisible(chromedp.CSS(`#revoke button`)),
		)
		if keys, _ := n.Store.Keys(a.ID); len(keys) != 3 {
			t.Fatalf("%d keys after asking, want 3: nothing revoked yet", len(keys))
		}
		run(t, ctx, 10*time.Second, "confirm",
			chromedp.Click(chromedp.CSS(`#revoke button`)),
			chromedp.WaitVisible(chromedp.CSS(`table.keys`)),
			chromedp.WaitNotPresent(chromedp.CSS(`#revoke`)),
		)
		if keys, _ := n.Store.Keys(a.ID); len(keys) != 2 {
			t.Fatalf("%d keys after confirming, want 2", len(keys))
		}
	})

	t.Run("delete through the confirmation", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "wrong name",
			chromedp.Navigate(n.URL+"/monitors/"+id),
			chromedp.WaitVisible(chromedp.CSS(`input[name=confirm_name]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name=confirm_name]`), "nightly"),
			chromedp.Submit(chromedp.CSS(`input[name=confirm_name]`)),
			chromedp.WaitVisible(chromedp.CSS(`.danger p.error`)),
		)
		if _, err := n.Store.Monitor(a.ID, id); err != nil {
			t.Fatal("deleted without the right name")
		}
		// The page after the refusal is a new document: wait for its form.
		run(t, ctx, 10*time.Second, "right name",
			chromedp.WaitVisible(chromedp.CSS(`form[action$="/delete"] input[name=confirm_name]`)),
			chromedp.SendKeys(chromedp.CSS(`form[action$="/delete"] input[name=confirm_name]`), "nightly-backup"),
			chromedp.Click(chromedp.CSS(`form[action$="/delete"] button`)),
			chromedp.WaitVisible(chromedp.CSS(`.banner.green`)),
		)
		if _, err := n.Store.Monitor(a.ID, id); err == nil {
			t.Fatal("monitor still there")
		}
		if list := value(t, ctx, chromedp.Text(chromedp.CSS(`main`))); strings.Contains(list, "nightly-backup\n") || !strings.Contains(list, "Deleted nightly-backup.") {
			t.Fatalf("list after delete: %q", list)
		}
	})
}

// TestMonitorFormsInABrowser makes, edits, copies and deletes a monitor in
// headless Chromium, as a user would: a refused form keeps what was
// typed and shows the problem next to its field.
func TestMonitorFormsInABrowser(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	ctx := newBrowser(t)
	signInBrowser(t, ctx, n.URL, a)

	t.Run("create, refused then accepted", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "open the form",
			chromedp.Click(chromedp.CSS(`a[href="/monitors/new"]`)),
			chromedp.WaitVisible(chromedp.CSS(`nav.tabs`)),
			chromedp.Click(chromedp.CSS(`nav.tabs a[href="/monitors/new?kind=http_check"]`)),
			chromedp.WaitVisible(chromedp.ID(`f-config-url`)),
			chromedp.SendKeys(chromedp.ID(`f-name`), "Shop front"),
			chromedp.SendKeys(chromedp.ID(`f-config-url`), "shop.example.com"),
			chromedp.SendKeys(chromedp.ID(`f-schedule`), "5m"),
			chromedp.SendKeys(chromedp.ID(`f-config-expected-status`), "200"),
			chromedp.Click(chromedp.CSS(`#monitor-form button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-field="config.url"] .field-error`)),
		)
		if msg := value(t, ctx, chromedp.Text(chromedp.CSS(`[data-field="config.url"] .field-error`))); !strings.Contains(msg, "absolute http or https URL") {
			t.Fatalf("url problem: %q", msg)
		}
		if got := value(t, ctx, chromedp.Value(chromedp.ID(`f-name`))); got != "Shop front" {
			t.Fatalf("the refused form lost the name: %q", got)
		}
		run(t, ctx, 10*time.Second, "fix the URL",
			chromedp.SetValue(chromedp.ID(`f-config-url`), "https://shop.example.com/"),
			chromedp.Click(chromedp.CSS(`#monitor-form button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.banner.green`)),
		)
		if h := value(t, ctx, chromedp.Text(chromedp.CSS(`h1`))); !strings.HasPrefix(h, "Shop front") {
			t.Fatalf("heading %q", h)
		}
	})
	id := n.monitorUUID(a, "Shop front")

	t.Run("edit", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "edit",
			chromedp.Click(chromedp.CSS(`#actions a[href$="/edit"]`)),
			chromedp.WaitVisible(chromedp.ID(`f-schedule`)),
			chromedp.SetValue(chromedp.ID(`f-schedule`), "1h"),
			chromedp.SetValue(chromedp.ID(`f-config-method`), "HEAD"),
			chromedp.Click(chromedp.CSS(`#monitor-form button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.banner.green`)),
		)
		m := n.manifestOf(a, id)
		if m["schedule"] != "1h" || m["config"].(map[string]any)["method"] != "HEAD" {
			t.Fatalf("after the edit: %s", asJSON(m))
		}
	})

	t.Run("duplicate", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "duplicate",
			chromedp.Click(chromedp.CSS(`#actions a[href^="/monitors/new?from="]`)),
			chromedp.WaitVisible(chromedp.ID(`f-name`)),
		)
		if got := value(t, ctx, chromedp.Value(chromedp.ID(`f-name`))); got != "Shop front-copy" {
			t.Fatalf("copy named %q", got)
		}
		run(t, ctx, 10*time.Second, "save the copy",
			chromedp.SetValue(chromedp.ID(`f-name`), "Shop checkout"),
			chromedp.Click(chromedp.CSS(`#monitor-form button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.banner.green`)),
		)
		cp := n.manifestOf(a, n.monitorUUID(a, "Shop checkout"))
		if cp["schedule"] != "1h" || cp["config"].(map[string]any)["url"] != "https://shop.example.com/" {
			t.Fatalf("the copy: %s", asJSON(cp))
		}
	})

	t.Run("pause and resume", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "pause",
			chromedp.Navigate(n.URL+"/monitors/"+id),
			chromedp.WaitVisible(chromedp.CSS(`form[action$="/pause"] button`)),
			chromedp.SetValue(chromedp.CSS(`form[action$="/pause"] select[name=for]`), "4h"),
			chromedp.SendKeys(chromedp.CSS(`form[action$="/pause"] input[name=reason]`), "moving the shop"),
			chromedp.Click(chromedp.CSS(`form[action$="/pause"] button`)),
			chromedp.WaitVisible(chromedp.CSS(`form[action$="/resume"] button`)),
		)
		m, err := n.Store.Monitor(a.ID, id)
		if err != nil || !m.GetQuiet().GetPaused() || m.GetQuiet().GetPauseReason() != "moving the shop" || m.GetQuiet().GetPausedUntilUnixMs() == 0 {
			t.Fatalf("after pause: %v %v", m.GetQuiet(), err)
		}
		if text := value(t, ctx, chromedp.Text(chromedp.ID(`quiet`))); !strings.Contains(text, "Paused until") || !strings.Contains(text, "moving the shop") {
			t.Fatalf("the page says %q", text)
		}
		run(t, ctx, 10*time.Second, "resume",
			chromedp.Click(chromedp.CSS(`form[action$="/resume"] button`)),
			chromedp.WaitVisible(chromedp.CSS(`form[action$="/pause"] button`)),
		)
		if m, err := n.Store.Monitor(a.ID, id); err != nil || m.GetQuiet().GetPaused() {
			t.Fatalf("after resume: %v %v", m.GetQuiet(), err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "delete",
			chromedp.Navigate(n.URL+"/monitors/"+id),
			chromedp.WaitVisible(chromedp.CSS(`form[action$="/delete"] input[name=confirm_name]`)),
			chromedp.SendKeys(chromedp.CSS(`form[action$="/delete"] input[name=confirm_name]`), "Shop front"),
			chromedp.Click(chromedp.CSS(`form[action$="/delete"] button`)),
			chromedp.WaitVisible(chromedp.CSS(`.banner.green`)),
		)
		if _, err := n.Store.Monitor(a.ID, id); err == nil {
			t.Fatal("monitor still there")
		}
	})
}

// TestMonitorListInABrowser: a filter applies as soon as it is changed,
// a search on Enter, and the pages turn, in headless Chromium.
func TestMonitorListInABrowser(t *testing.T) {
	n := newNode(t)
	a := listAccount(t, n)
	ctx := newBrowser(t)
	signInBrowser(t, ctx, n.URL, a)
	rows := func() int {
		return value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.monitors tbody tr").length`))
	}
	if got := rows(); got != 100 {
		t.Fatalf("first page: %d rows", got)
	}
	if first := value(t, ctx, chromedp.Text(chromedp.CSS(`table.monitors tbody tr`))); !strings.Contains(first, "Job 200") || !strings.Contains(first, "failed") {
		t.Fatalf("first row %q: the failed ones come first", first)
	}
	run(t, ctx, 10*time.Second, "next page",
		chromedp.Click(chromedp.CSS(`.pager a[rel=next]`)),
		chromedp.WaitVisible(chromedp.CSS(`.pager a[rel=prev]`)),
	)
	if loc := value(t, ctx, chromedp.Location()); !strings.HasSuffix(loc, "/?page=2") {
		t.Fatalf("page 2 at %s", loc)
	}
	run(t, ctx, 10*time.Second, "the tag filter applies on change",
		// SetValue fires the select's change event, as a choice does.
		chromedp.SetValue(chromedp.CSS(`select[name=tag]`), "nightly"),
		chromedp.WaitVisible(chromedp.CSS(`#filters a[href="/"]`)),
	)
	if loc := value(t, ctx, chromedp.Location()); !strings.Contains(loc, "tag=nightly") || strings.Contains(loc, "page=") {
		t.Fatalf("after the tag filter: %s", loc)
	}
	if got := rows(); got != 25 {
		t.Fatalf("nightly: %d rows", got)
	}
	run(t, ctx, 10*time.Second, "search", chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "job-24\r"))
	// The list before the search has the same elements: wait for the
	// searched page to have loaded.
	loaded(t, ctx, "q=job-24")
	if got := rows(); got != 1 {
		t.Fatalf("nightly job-24*: %d rows (job-240)", got)
	}
}

// TestChannelInABrowser makes, changes and deletes an alert channel in
// headless Chromium: the form shows the selected type's settings, a
// refused one is marked next to its field, and delete asks for the name.
func TestChannelInABrowser(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	ctx := newBrowser(t)
	run(t, ctx, 10*time.Second, "sign in",
		chromedp.Navigate(n.URL+"/channels"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), a.Email),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), a.Password),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.channel-form`)),
	)
	visible := func(typ string) bool {
		return value(t, ctx, chromedp.Evaluate[bool](`getComputedStyle(document.querySelector('fieldset[data-type=`+typ+`]')).display !== "none"`))
	}

	t.Run("create", func(t *testing.T) {
		if !visible("slack") || visible("webhook") {
			t.Fatal("the form does not show only the selected type's settings")
		}
		run(t, ctx, 10*time.Second, "pick webhook",
			chromedp.SetValue(chromedp.CSS(`form.channel-form select[name=type]`), "webhook"),
			chromedp.WaitVisible(chromedp.CSS(`input[name="webhook.url"]`)),
		)
		if visible("slack") {
			t.Fatal("slack's settings still show after picking webhook")
		}
		run(t, ctx, 10*time.Second, "create",
			chromedp.SendKeys(chromedp.CSS(`form.channel-form input[name=name]`), "ci hook"),
			chromedp.SendKeys(chromedp.CSS(`input[name="webhook.url"]`), "https://ci.example.com/lookout"),
			chromedp.Click(chromedp.CSS(`form.channel-form button`)),
			chromedp.WaitVisible(chromedp.ID(`secret`)),
		)
		if secret := value(t, ctx, chromedp.Text(chromedp.ID(`secret`))); !strings.HasPrefix(secret, "whsec_") {
			t.Fatalf("secret %q", secret)
		}
		chans, _ := n.Store.Channels(a.ID)
		if len(chans) != 1 || chans[0].GetType() != "webhook" || chans[0].GetName() != "ci hook" {
			t.Fatalf("stored %v", chans)
		}
	})

	t.Run("edit", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "open",
			chromedp.Click(chromedp.CSS(`table.channels a`)),
			chromedp.WaitVisible(chromedp.CSS(`table.deliveries`)),
		)
		if v := value(t, ctx, chromedp.Value(chromedp.CSS(`input[name="webhook.secret"]`))); !strings.HasPrefix(v, "****") {
			t.Fatalf("the secret field shows %q, want it masked", v)
		}
		run(t, ctx, 10*time.Second, "a refused URL",
			chromedp.SetValue(chromedp.CSS(`input[name="webhook.url"]`), "ftp://ci.example.com"),
			chromedp.Click(chromedp.CSS(`form.channel-form button`)),
			chromedp.WaitVisible(chromedp.CSS(`fieldset[data-type=webhook] .field-error`)),
		)
		if msg := value(t, ctx, chromedp.Text(chromedp.CSS(`fieldset[data-type=webhook] .field-error`))); msg != "Must be an absolute http or https URL." {
			t.Fatalf("error next to the URL: %q", msg)
		}
		run(t, ctx, 10*time.Second, "save",
			chromedp.SetValue(chromedp.CSS(`input[name="webhook.url"]`), "https://ci.example.com/v2"),
			chromedp.SetValue(chromedp.CSS(`form.channel-form input[name=name]`), "ci hook v2"),
			chromedp.Click(chromedp.CSS(`form.channel-form input[name=default]`)),
			chromedp.Click(chromedp.CSS(`form.channel-form button`)),
			chromedp.WaitVisible(chromedp.CSS(`.banner.green`)),
		)
		chans, _ := n.Store.Channels(a.ID)
		if c := chans[0]; c.GetName() != "ci hook v2" || c.GetIsDefault() || !strings.Contains(string(c.GetConfigJson()), `"url":"https://ci.example.com/v2"`) || !strings.Contains(string(c.GetConfigJson()), `"secret":"whsec_`) {
			t.Fatalf("stored %v", c)
		}
	})

	t.Run("delete", func(t *testing.T) {
		run(t, ctx, 10*time.Second, "wrong name",
			chromedp.SendKeys(chromedp.CSS(`input[name=confirm_name]`), "ci hook"),
			chromedp.Click(chromedp.CSS(`form[action$="/delete"] button`)),
			chromedp.WaitVisible(chromedp.CSS(`.danger p.error`)),
		)
		if chans, _ := n.Store.Channels(a.ID); len(chans) != 1 {
			t.Fatal("deleted without the right name")
		}
		run(t, ctx, 10*time.Second, "right name",
			chromedp.WaitVisible(chromedp.CSS(`form[action$="/delete"] input[name=confirm_name]`)),
			chromedp.SendKeys(chromedp.CSS(`form[action$="/delete"] input[name=confirm_name]`), "ci hook v2"),
			chromedp.Click(chromedp.CSS(`form[action$="/delete"] button`)),
			chromedp.WaitVisible(chromedp.CSS(`.banner.green`)),
		)
		if chans, _ := n.Store.Channels(a.ID); len(chans) != 0 {
			t.Fatalf("channel still there: %v", chans)
		}
		if text := value(t, ctx, chromedp.Text(chromedp.CSS(`main`))); !strings.Contains(text, "Deleted ci hook v2.") || !strings.Contains(text, "No channels yet.") {
			t.Fatalf("list after delete: %q", text)
		}
	})
}
