package crontab

import (
	"fmt"
	"strings"
	"testing"
)

const userCrontab = `# m h dom mon dow command
MAILTO=ops@example.com
SHELL=/bin/bash

# lookout: nightly-backup
30 2 * * * /usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1
*/15 * * * * cd /srv/app && ./bin/rake jobs:work
@hourly /usr/bin/php /var/www/artisan schedule:run
@reboot /usr/local/bin/start-agent
61 * * * * /bin/true
not a job line
CRON_TZ=America/New_York
0 9 * * MON-FRI /usr/local/bin/report.py --daily
0 9 * * MON-FRI /usr/local/bin/report.py --weekly
TZ=Europe/Berlin
5 4 * * sun date +\%F >> /tmp/dates
0 0 1 * * echo "month" | mail -s report % body
`

func jobsOf(t *testing.T, f *File) map[string]Job {
	t.Helper()
	out := map[string]Job{}
	for _, j := range f.Jobs() {
		out[j.Name] = j
	}
	return out
}

func TestParse(t *testing.T) {
	f := Parse(userCrontab, Options{Zone: "Europe/Berlin"})
	var got []string
	for _, j := range f.Jobs() {
		got = append(got, fmt.Sprintf("%d %s [%s] %s: %s", j.Line, j.Name, j.Schedule, j.Zone, j.Command))
	}
	want := []string{
		"6 nightly-backup [30 2 * * *] Europe/Berlin: /usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1",
		"7 rake-jobs-work [*/15 * * * *] Europe/Berlin: cd /srv/app && ./bin/rake jobs:work",
		"8 php-artisan-schedule-run [@hourly] Europe/Berlin: /usr/bin/php /var/www/artisan schedule:run",
		"13 report-py [0 9 * * MON-FRI] America/New_York: /usr/local/bin/report.py --daily",
		"14 report-py-" + f.Jobs()[4].Name[len("report-py-"):] + " [0 9 * * MON-FRI] America/New_York: /usr/local/bin/report.py --weekly",
		// CRON_TZ was set: TZ= no longer moves the schedules.
		`16 date-f [5 4 * * sun] America/New_York: date +\%F >> /tmp/dates`,
		`17 echo-month [0 0 1 * *] America/New_York: echo "month" | mail -s report % body`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("jobs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := f.Jobs()[4].Name; len(n) != len("report-py-")+6 {
		t.Fatalf("a second report-py is %q, want a hash suffix", n)
	}
	var problems []string
	for _, p := range f.Problems() {
		problems = append(problems, fmt.Sprint(p.Line))
	}
	if strings.Join(problems, " ") != "9 10 11" {
		t.Fatalf("problems %v: %v", problems, f.Problems())
	}
	for _, p := range f.Problems() {
		if p.Reason == "" || p.Text == "" {
			t.Fatalf("a problem without reason or text: %+v", p)
		}
	}
}

// Names are stable: the same crontab gives the same names, and a job added
// at the end renames no other.
func TestNamesStable(t *testing.T) {
	a := jobsOf(t, Parse(userCrontab, Options{}))
	b := jobsOf(t, Parse(userCrontab+"0 3 * * * /usr/local/bin/report.py --daily\n", Options{}))
	for name, j := range a {
		if b[name].Line != j.Line {
			t.Fatalf("job %s moved from line %d to %d", name, j.Line, b[name].Line)
		}
	}
	if len(b) != len(a)+1 {
		t.Fatalf("%d jobs, want %d", len(b), len(a)+1)
	}
}

func TestSystemCrontabAndZones(t *testing.T) {
	f := Parse(`SHELL=/bin/sh
PATH=/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin
17 *	* * *	root    cd / && run-parts --report /etc/cron.hourly
TZ=Asia/Kolkata
25 6	* * *	root	test -x /usr/sbin/anacron || ( cd / && run-parts --report /etc/cron.daily )
TZ=Mars/Olympus
47 6	* * 7	root	/bin/weekly
CRON_TZ=UTC
52 6	1 * *	www-data	/bin/monthly
`, Options{System: true, Zone: "Europe/Paris"})
	var got []string
	for _, j := range f.Jobs() {
		got = append(got, fmt.Sprintf("%s %s %s %s", j.Name, j.User, j.Zone, j.Schedule))
	}
	if strings.Join(got, "|") != "run-parts-cron-hourly root Europe/Paris 17 * * * *|test-anacron root Asia/Kolkata 25 6 * * *|monthly www-data UTC 52 6 1 * *" {
		t.Fatalf("jobs %q", got)
	}
	if p := f.Problems(); len(p) != 2 || p[0].Line != 6 || p[1].Line != 7 {
		t.Fatalf("problems %v", p)
	}
}

func TestRewriteIsIdempotent(t *testing.T) {
	f := Parse(userCrontab, Options{})
	out, skipped := f.Rewrite(RewriteOptions{Lookout: "/usr/local/bin/lookout", Env: map[string]string{"LOOKOUT_ADDR": "https://lookout.example", "MAILTO": "x@example.com"}})
	lines := strings.Split(out, "\n")
	for i, want := range map[int]string{
		0:  "LOOKOUT_ADDR=https://lookout.example", // MAILTO is set already: not added
		6:  "30 2 * * * /usr/local/bin/lookout exec nightly-backup -- /bin/sh -c '/usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1'",
		7:  "*/15 * * * * /usr/local/bin/lookout exec rake-jobs-work -- /bin/sh -c 'cd /srv/app && ./bin/rake jobs:work'",
		8:  "@hourly /usr/local/bin/lookout exec php-artisan-schedule-run -- /usr/bin/php /var/www/artisan schedule:run",
		9:  "@reboot /usr/local/bin/start-agent",
		10: "61 * * * * /bin/true",
		11: "not a job line",
		16: `5 4 * * sun /usr/local/bin/lookout exec date-f -- /bin/sh -c 'date +\%F >> /tmp/dates'`,
		17: `0 0 1 * * echo "month" | mail -s report % body`, // cron's %: left alone
	} {
		if lines[i] != want {
			t.Errorf("line %d: %q\nwant %q", i+1, lines[i], want)
		}
	}
	if len(skipped) != 1 || skipped[0].Name != "echo-month" {
		t.Fatalf("skipped %v", skipped)
	}
	again := Parse(out, Options{})
	out2, _ := again.Rewrite(RewriteOptions{Lookout: "/opt/other/lookout", Env: map[string]string{"LOOKOUT_ADDR": "https://other.example"}})
	if out2 != out {
		t.Fatalf("a second rewrite changed the crontab:\n%s\nwant\n%s", out2, out)
	}
	// The wrapped crontab names the same monitors, with the same schedules.
	a, b := jobsOf(t, f), jobsOf(t, again)
	if len(a) != len(b) {
		t.Fatalf("%d jobs before, %d after", len(a), len(b))
	}
	for name, j := range a {
		if w := b[name]; w.Schedule != j.Schedule || w.Zone != j.Zone || (w.Inner != j.Command && w.Command != j.Command && !strings.Contains(w.Inner, j.Command)) {
			t.Fatalf("job %s: %+v became %+v", name, j, w)
		}
	}
}

func TestNameMarkers(t *testing.T) {
	f := Parse(`# lookout: bad name!
0 1 * * * /bin/a
# lookout: same
0 2 * * * /bin/b
# lookout: same
0 3 * * * /bin/c
# lookout: kept
0 4 * * * /usr/bin/lookout exec wrapped -- /bin/d
`, Options{})
	got := jobsOf(t, f)
	if _, ok := got["same"]; !ok || len(got) != 2 || got["wrapped"].Line != 8 {
		t.Fatalf("jobs %v", got)
	}
	if p := f.Problems(); len(p) != 2 || p[0].Line != 1 || p[1].Line != 6 {
		t.Fatalf("problems %v", p)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/local/bin/backup.sh --full > /dev/null 2>&1": "backup-sh",
		"FOO=1 BAR=2 /opt/x/run-etl nightly --verbose":     "run-etl-nightly",
		"cd /srv && cd app && make   deploy":               "make-deploy",
		"$HOME/bin/x":                                      "job",
		"'/path with/quoted' arg":                          "path-quoted-arg",
		strings.Repeat("abcdefghij", 10):                   strings.Repeat("abcdefghij", 5)[:48],
	} {
		if got := slug(in); got != want || !nameOK(got) {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
