package public_test

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestStatusPage(t *testing.T) {
	n, a, _ := badgeSetup(t)
	// A monitor with a display name, in the page's project, and one
	// matched by nothing, whose name must not appear.
	api := pingManifest("api-health")
	api["display_name"], api["project"] = "Public API", "customer"
	n.monitor(a, api)
	n.monitor(a, pingManifest("secret-payroll-export", "internal"))
	n.ping(a, "api-health", "complete")
	n.ping(a, "secret-payroll-export", "fail")

	// No page yet.
	if status, _, _ := n.get("/status/acme", ""); status != 404 {
		t.Fatalf("no page: %d", status)
	}
	status, body := n.api(a, "PUT", "/api/v1/status-page", map[string]any{"slug": "acme", "title": "Acme <status>",
		"match": map[string]any{"tags": []string{"prod"}, "projects": []string{"customer"}}})
	if status != 200 {
		t.Fatalf("put: %d %v", status, body)
	}
	n.clock.advance(time.Hour)
	status, h, html := n.get("/status/acme", "")
	if status != 200 || h.Get("Content-Type") != "text/html; charset=utf-8" || !strings.HasPrefix(h.Get("Cache-Control"), "public, max-age=") {
		t.Fatalf("page: %d %v", status, h)
	}
	// Nothing is loaded from elsewhere: the CSS inline, allowed by its
	// hash, no script.
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "style-src 'sha256-") {
		t.Fatalf("CSP %q", csp)
	}
	if strings.Contains(html, "<script") || strings.Contains(html, "<link") || strings.Contains(html, "http://") || strings.Contains(html, "https://") {
		t.Fatalf("the page loads something: %s", html)
	}
	for _, want := range []string{"<title>Acme &lt;status&gt;</title>", ">backup<", ">nightly<", ">Public API<", "1 monitor is down"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Matched by nothing: neither its name nor its state shows; nor
	// anything else of the account.
	for _, absent := range []string{"secret-payroll-export", "internal", "site", "cert", ">old<", "api-health", "owner@example.com", a.ID} {
		if strings.Contains(html, absent) {
			t.Errorf("the page shows %q", absent)
		}
	}
	// 90 bars per monitor: the days before the first state have no data,
	// today's is green for backup, red for nightly (down all day so far).
	rows := regexp.MustCompile(`(?s)<li>.*?</li>`).FindAllString(html, -1)
	if len(rows) != 3 {
		t.Fatalf("%d monitors shown, want 3", len(rows))
	}
	for _, row := range rows {
		if bars := strings.Count(row, "<span class=\"ok\"") + strings.Count(row, "<span class=\"none\"") + strings.Count(row, "<span class=\"major\"") + strings.Count(row, "<span class=\"minor\""); bars != 90 {
			t.Fatalf("%d bars in %s", bars, row)
		}
	}
	// In name order: backup, nightly, Public API. Backup has been up
	// for the hour since it was made; nightly failed the moment it was
	// made.
	if !strings.Contains(rows[0], `<span class="ok" title="2026-03-15: 100% up"></span></div>`) || !strings.Contains(rows[0], "100.00% up, 90 days") {
		t.Fatalf("backup's row: %s", rows[0])
	}
	if !strings.Contains(rows[1], `class="pill red">down<`) || !strings.Contains(rows[1], `class="major" title="2026-03-15: 0.00% up, down 1h 0m"`) {
		t.Fatalf("nightly's row: %s", rows[1])
	}
	if !strings.Contains(rows[2], `class="pill green">up<`) {
		t.Fatalf("Public API's row: %s", rows[2])
	}

	// Unknown slug: 404. Disabled: 404.
	if status, _, body := n.get("/status/nosuch", ""); status != 404 || strings.Contains(body, "Acme") {
		t.Fatalf("unknown slug: %d", status)
	}
	n.api(a, "PUT", "/api/v1/status-page", map[string]any{"slug": "acme", "title": "Acme", "enabled": false})
	if status, _, body := n.get("/status/acme", ""); status != 404 || strings.Contains(body, "backup") {
		t.Fatalf("disabled page: %d %s", status, body)
	}
}

func TestStatusPageDailyUptime(t *testing.T) {
	n := newNode(t)
	a := n.signUp("owner@example.com")
	n.monitor(a, pingManifest("job"))
	n.ping(a, "job", "complete")
	// Down for 6 of the next 24 hours, then up again a day later.
	n.clock.advance(18 * time.Hour)
	n.ping(a, "job", "fail")
	n.clock.advance(6 * time.Hour)
	n.ping(a, "job", "complete")
	n.clock.advance(24 * time.Hour)
	n.api(a, "PUT", "/api/v1/status-page", map[string]any{"slug": "acme", "title": "Acme"})
	_, _, html := n.get("/status/acme", "")
	// Up from 12:30 on the 15th; down from 06:30 to 12:30 on the 16th.
	for _, want := range []string{
		`title="2026-03-14: no data"`,
		`title="2026-03-15: 100% up"`,
		`class="major" title="2026-03-16: 75.00% up, down 6h 0m"`,
		`title="2026-03-17: 100% up"`,
		"87.50% up, 90 days", // 6 h down of 48
		"All systems operational",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
