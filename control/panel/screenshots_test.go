package panel_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"lookout/control/admin"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestScreenshots saves a PNG of each main page into the folder
// LOOKOUT_SCREENSHOTS names (make screenshots: docs/screenshots), from a
// node with demo data. Without the variable it is skipped.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("LOOKOUT_SCREENSHOTS")
	if dir == "" {
		t.Skip("LOOKOUT_SCREENSHOTS not set (make screenshots sets it)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := newNode(t)
	limit, monitors := int64(50), int64(50)
	a := n.signUp("demo@lookout.local", &admin.PlanRequest{Name: ptr("team"), MonthlyEventLimit: &limit, MonitorLimit: &monitors, IngestRatePerSecond: ptr(1000.0), IngestBurst: ptr(int64(1000))})
	backup, check := demoData(t, n, a)
	ctx := newBrowser(t)

	shot := func(name string, full bool) {
		t.Helper()
		var png []byte
		var err error
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		chromedp.Do(sctx, chromedp.Sleep(300*time.Millisecond)) // the live stream's first status
		if full {
			png, err = chromedp.Run(sctx, chromedp.FullScreenshot(100))
		} else {
			png, err = chromedp.Run(sctx, chromedp.CaptureScreenshot())
		}
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ctx, 10*time.Second, "login page", chromedp.EmulateViewport(1200, 760), chromedp.Navigate(n.URL+"/login"), chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)))
	shot("login", false)
	run(t, ctx, 10*time.Second, "sign in",
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), a.Email),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), a.Password),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.ID(`counts`)))
	shot("monitors", true)
	run(t, ctx, 10*time.Second, "monitor", chromedp.Navigate(n.URL+"/monitors/"+backup), chromedp.WaitVisible(chromedp.CSS(`#live-state.on`)))
	shot("monitor", true)
	run(t, ctx, 10*time.Second, "check", chromedp.Navigate(n.URL+"/monitors/"+check), chromedp.WaitVisible(chromedp.ID(`executions`)))
	shot("check", true)
	run(t, ctx, 10*time.Second, "monitor form",
		chromedp.Navigate(n.URL+"/monitors/new?kind=http_check"),
		chromedp.WaitVisible(chromedp.ID(`f-config-url`)),
		chromedp.SendKeys(chromedp.ID(`f-name`), "Shop front page"),
		chromedp.SendKeys(chromedp.ID(`f-config-url`), "shop.example.com/health"),
		chromedp.SendKeys(chromedp.ID(`f-schedule`), "5m"),
		chromedp.Click(chromedp.CSS(`#monitor-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID(`problems`)))
	shot("monitor-form", false)
	run(t, ctx, 10*time.Second, "keys",
		chromedp.Navigate(n.URL+"/keys"),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "ci-deploy"),
		chromedp.Click(chromedp.CSS(`input[name=scope][value=delete]`)),
		chromedp.Submit(chromedp.CSS(`input[name=name]`)),
		chromedp.WaitVisible(chromedp.ID(`secret`)))
	shot("keys", true)
	run(t, ctx, 10*time.Second, "channels", chromedp.Navigate(n.URL+"/channels"), chromedp.WaitVisible(chromedp.CSS(`table.channels`)))
	shot("channels", true)
	chans, _ := n.Store.Channels(a.ID)
	for _, c := range chans {
		if c.GetName() == "ops slack" {
			run(t, ctx, 10*time.Second, "a channel", chromedp.Navigate(n.URL+"/channels/"+c.GetId()), chromedp.WaitVisible(chromedp.CSS(`table.deliveries`)))
		}
	}
	shot("channel", true)
	run(t, ctx, 10*time.Second, "account", chromedp.Navigate(n.URL+"/account"), chromedp.WaitVisible(chromedp.ID(`quota`)))
	shot("account", true)
	for _, page := range []string{"maintenance", "users", "audit"} {
		run(t, ctx, 10*time.Second, page, chromedp.Navigate(n.URL+"/"+page), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
		shot(page, true)
	}

	// A phone, and the dark scheme.
	run(t, ctx, 10*time.Second, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Navigate(n.URL+"/"), chromedp.WaitVisible(chromedp.ID(`counts`)))
	shot("monitors-phone", false)
	run(t, ctx, 10*time.Second, "dark",
		chromedp.EmulateViewport(1200, 760),
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
			return err
		}),
		chromedp.Navigate(n.URL+"/monitors/"+backup), chromedp.WaitVisible(chromedp.CSS(`#live-state.on`)))
	shot("monitor-dark", true)
}

func ptr[T any](v T) *T { return &v }

// demoData fills a's account: ping monitors in every state with runs
// over the last days, a stream, an http_check with executions, channels
// and a group. It returns the uuids of the backup and of the check.
func demoData(t *testing.T, n *node, a account) (backup, check string) {
	now := time.Now()
	ping := func(body string, args ...any) { n.ping(a, fmt.Sprintf(body, args...)) }
	for i := 24; i >= 1; i-- {
		at := now.Add(-time.Duration(i) * time.Hour).Unix()
		d := 40 + float64(i%7)*9 + float64(i%3)*4
		status := "complete"
		if i == 5 || i == 13 {
			status = "fail"
		}
		ping(`{"event_type":"ping","monitor":"nightly-backup","project":"infra","status":"run","series":"r%d","host":"db1","timestamp":%d}`, i, at)
		ping(`{"event_type":"ping","monitor":"nightly-backup","project":"infra","status":"%s","series":"r%d","host":"db1","duration":%g,"timestamp":%d,"message":"%s"}`,
			status, i, d, at+int64(d), map[bool]string{true: "pg_dump: connection reset", false: "42 GiB written"}[status == "fail"])
	}
	ping(`{"event_type":"ping","monitor":"nightly-backup","project":"infra","status":"run","series":"r0","host":"db1"}`)
	ping(`{"event_type":"ping","monitor":"invoice-export","project":"billing","status":"complete","duration":3.2}`)
	ping(`{"event_type":"ping","monitor":"db-vacuum","project":"infra","status":"fail","exit_code":137,"message":"killed: out of memory"}`)
	ping(`{"event_type":"stream_event","monitor":"etl-import","project":"data","state":"extract started"}`)
	ping(`{"event_type":"stream_event","monitor":"etl-import","project":"data","state":"load ok"}`)
	ping(`{"event_type":"ping","monitor":"cache-warmup","status":"skip","message":"maintenance window"}`)
	for _, body := range []string{
		`{"manifest_version":1,"kind":"ping","name":"weekly-report","display_name":"Weekly report","project":"billing","timeout_seconds":600,"expected_interval_seconds":604800,"grace_seconds":3600,"tags":["weekly","email"]}`,
		`{"manifest_version":1,"kind":"http_check","name":"api-health","schedule":"* * * * *","tags":["prod"],"config":{"url":"https://api.example.com/health","method":"GET","timeout":10,"expected_status":200}}`,
		`{"manifest_version":1,"kind":"ssl_check","name":"example-com-cert","schedule":"0 * * * *","config":{"domain":"example.com","warning_days":30,"alert_days":7}}`,
	} {
		if st, b := n.api(a, "POST", "/api/v1/monitors", body); st != 201 {
			t.Fatalf("create: %d %s", st, b)
		}
	}
	check = n.monitorUUID(a, "api-health")
	var execs []*raftv1.Execution
	for i := 20; i >= 1; i-- {
		slot := now.Truncate(time.Minute).Add(-time.Duration(i) * time.Minute).UnixMilli()
		total := int64(80 + (i%5)*23)
		e := &raftv1.Execution{AccountId: a.ID, CheckUuid: check, Region: "control", SlotUnixMs: slot, Status: "success", Attempts: 1,
			StartedUnixMs: slot + 50, FinishedUnixMs: slot + 50 + total, DurationMs: total,
			Http: &raftv1.ExecutionHTTP{StatusCode: 200, ResponseBytes: 512, DnsMs: 4, ConnectMs: 11, TlsMs: 23, TtfbMs: total - 45, TotalMs: total}}
		if i == 7 {
			e.Status, e.Error, e.ErrorKind, e.Http.StatusCode = "failed", "expected status 200, got 503", "status", 503
		}
		execs = append(execs, e)
	}
	for len(execs) > 0 {
		batch := execs[:min(10, len(execs))]
		execs = execs[len(batch):]
		if res, err := n.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: batch, RetentionCount: 100}}}); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("record executions: %v %v", res, err)
		}
	}
	ctx := context.Background()
	slack, err := n.Admin.CreateChannel(ctx, a.ID, admin.ChannelRequest{Type: "slack", Name: "ops slack", Config: []byte(`{"webhook_url":"https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX"}`), Default: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Admin.CreateChannel(ctx, a.ID, admin.ChannelRequest{Type: "webhook", Name: "incident bridge", Config: []byte(`{"url":"https://hooks.example.com/lookout"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Admin.CreateGroup(ctx, a.ID, "on-call", []byte(`[{"channel_id":"`+slack.ID+`"},{"type":"pagerduty","name":"pager","config":{"routing_key":"R0000000000000000000000000000000"}}]`)); err != nil {
		t.Fatal(err)
	}
	// The slack channel's history: alerts raised now, delivered but the
	// newest, which is being retried.
	for _, status := range []string{"fail", "complete", "fail"} {
		n.ping(a, `{"event_type":"ping","monitor":"invoice-export","status":"`+status+`"}`)
	}
	pending, err := n.Store.PendingAlerts(0)
	if err != nil {
		t.Fatal(err)
	}
	for i, al := range pending {
		rec := &raftv1.RecordDelivery{AlertId: al.GetId(), ChannelRef: "chan:" + slack.ID, Delivered: i < len(pending)-1}
		if !rec.Delivered {
			rec.Error, rec.NextTryUnixMs = "slack: receiver answered 503 Service Unavailable", time.Now().Add(time.Minute).UnixMilli()
		}
		if res, err := n.Cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_RecordDelivery{RecordDelivery: rec}}); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("record delivery: %v %v", res, err)
		}
	}
	return n.monitorUUID(a, "nightly-backup"), check
}
