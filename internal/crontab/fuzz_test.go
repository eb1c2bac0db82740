package crontab

import "testing"

// FuzzParseRewrite: no crontab panics the parser or the rewrite, every
// line survives a rewrite, and a rewritten crontab rewrites to itself.
func FuzzParseRewrite(f *testing.F) {
	f.Add(userCrontab, false)
	f.Add("17 * * * * root cd / && run-parts /etc/cron.hourly\n", true)
	f.Add("# lookout: x\n@daily a'b\"c\n", false)
	f.Add("TZ=\n* * * * *\n", false)
	f.Fuzz(func(t *testing.T, data string, system bool) {
		p := Parse(data, Options{System: system})
		out, _ := p.Rewrite(RewriteOptions{Lookout: "/bin/lookout"})
		if len(Parse(out, Options{System: system}).lines) < len(p.lines) {
			t.Fatalf("the rewrite lost lines:\n%q\n%q", data, out)
		}
		again, _ := Parse(out, Options{System: system}).Rewrite(RewriteOptions{Lookout: "/bin/lookout"})
		if again != out {
			t.Fatalf("not idempotent:\n%q\n%q\n%q", data, out, again)
		}
	})
}
