// Package crontab reads a crontab into the jobs it runs, for lookout sync:
// each job's schedule, the time zone it is read in (CRON_TZ= or TZ= lines
// above it), the user (system crontabs) and the command, and a stable
// monitor name for it. It rewrites a crontab with each job wrapped in
// lookout exec, keeping every other line as it was.
//
// Lines it cannot read (a bad schedule, @reboot, too few fields) are
// Problems: reported, never dropped, and left as they are by Rewrite.
package crontab

import (
	"fmt"
	"regexp"
	"strings"

	"lookout/internal/schedule"
)

// Options say how to read a crontab.
type Options struct {
	// System reads a system crontab (/etc/crontab, /etc/cron.d): a user
	// column between the schedule and the command.
	System bool
	// Zone is the zone of jobs with no CRON_TZ= or TZ= above them (the
	// cron daemon's: the host's); "" is UTC.
	Zone string
}

// Job is a job line.
type Job struct {
	// Line is its line number, from 1.
	Line int
	// Name is the monitor's: a "# lookout: NAME" comment on the line above,
	// the name of the lookout exec that already wraps it, or a slug of the
	// command, unique in the crontab.
	Name string
	// Schedule is the cron expression or @descriptor, Zone the IANA zone it
	// is read in ("" is UTC).
	Schedule, Zone string
	// User is the user column of a system crontab.
	User string
	// Command is the command as written (after the schedule and user);
	// Wrapped tells whether it is already a lookout exec, Inner then being
	// the command it runs.
	Command, Inner string
	Wrapped        bool
	// prefix is the line up to the command, kept as written.
	prefix string
}

// Problem is a line that is not a job lookout can monitor.
type Problem struct {
	Line   int
	Text   string
	Reason string
}

func (p Problem) String() string {
	return fmt.Sprintf("line %d: %s: %s", p.Line, p.Reason, p.Text)
}

// File is a parsed crontab.
type File struct {
	lines    []string
	jobs     []Job
	problems []Problem
	env      map[string]bool // variables the crontab sets
}

// Jobs returns the jobs in line order.
func (f *File) Jobs() []Job { return append([]Job(nil), f.jobs...) }

// Problems returns the lines that are not monitorable jobs, in line order.
func (f *File) Problems() []Problem { return append([]Problem(nil), f.problems...) }

var (
	envLine    = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$`)
	nameMarker = regexp.MustCompile(`^\s*#\s*lookout:\s*(.*?)\s*$`)
	// wrapped is a command that lookout exec already wraps (as Rewrite
	// writes it: the binary, exec, the name, --).
	wrapped = regexp.MustCompile(`^(?:\S*/)?lookout\S*\s+exec\s+([A-Za-z0-9_-]{1,64})\s+--\s+(.*)$`)
)

// Parse reads a crontab.
func Parse(data string, o Options) *File {
	f := &File{lines: strings.Split(strings.TrimSuffix(data, "\n"), "\n"), env: map[string]bool{}}
	if data == "" {
		f.lines = nil
	}
	zone, zoneOK := o.Zone, true
	cronTZ := false // a CRON_TZ= line was seen: TZ= no longer sets the schedules' zone
	marked, markedName := -1, ""
	names := map[string]int{} // name -> line of the job that has it
	for i, text := range f.lines {
		n := i + 1
		trimmed := strings.TrimSpace(text)
		switch {
		case trimmed == "":
			continue
		case strings.HasPrefix(trimmed, "#"):
			if m := nameMarker.FindStringSubmatch(trimmed); m != nil {
				marked, markedName = n+1, m[1]
			}
			continue
		}
		if m := envLine.FindStringSubmatch(text); m != nil {
			key, val := m[1], unquote(strings.TrimSpace(m[2]))
			f.env[key] = true
			if key == "CRON_TZ" || key == "TZ" && !cronTZ {
				cronTZ = cronTZ || key == "CRON_TZ"
				zone, zoneOK = strings.TrimPrefix(val, ":"), true
				if _, err := schedule.LoadZone(zone); err != nil {
					zoneOK = false
					f.problem(n, text, fmt.Sprintf("%s is not an IANA time zone; the jobs below it are not monitored", key))
				}
			}
			continue
		}
		job, reason := parseJob(text, o.System)
		if reason != "" {
			f.problem(n, text, reason)
			continue
		}
		job.Line, job.Zone = n, zone
		if !zoneOK {
			f.problem(n, text, "its time zone is not valid")
			continue
		}
		if _, err := schedule.ParseIn(job.Schedule, job.Zone); err != nil {
			f.problem(n, text, strings.TrimPrefix(err.Error(), schedule.ErrInvalid.Error()+": "))
			continue
		}
		if m := wrapped.FindStringSubmatch(job.Command); m != nil {
			job.Name, job.Inner, job.Wrapped = m[1], m[2], true
		} else if marked == n {
			if !nameOK(markedName) {
				f.problem(n-1, f.lines[n-2], "the name is not a ping monitor name (1 to 64 of a-z A-Z 0-9 _ -)")
				continue
			}
			job.Name = markedName
		}
		if job.Name != "" {
			if other, dup := names[job.Name]; dup {
				f.problem(n, text, fmt.Sprintf("the name %q is taken by the job on line %d", job.Name, other))
				continue
			}
			names[job.Name] = n
		}
		f.jobs = append(f.jobs, job)
	}
	f.nameBySlug(names)
	return f
}

func (f *File) problem(n int, text, reason string) {
	f.problems = append(f.problems, Problem{Line: n, Text: strings.TrimSpace(text), Reason: reason})
}

// parseJob splits a job line into its schedule, user and command, or says
// why it is not a job.
func parseJob(text string, system bool) (Job, string) {
	rest := strings.TrimLeft(text, " \t")
	want := 5
	if strings.HasPrefix(rest, "@") {
		want = 1
	}
	if system {
		want++
	}
	fields := make([]string, 0, want)
	for len(fields) < want {
		rest = strings.TrimLeft(rest, " \t")
		end := strings.IndexAny(rest, " \t")
		if rest == "" || end < 0 {
			return Job{}, fmt.Sprintf("not a job line: a job has %d fields before its command", want)
		}
		fields = append(fields, rest[:end])
		rest = rest[end:]
	}
	cmd := strings.TrimSpace(rest)
	if cmd == "" {
		return Job{}, "a job without a command"
	}
	j := Job{Command: cmd, prefix: text[:strings.LastIndex(text, cmd)]}
	if system {
		j.User, fields = fields[len(fields)-1], fields[:len(fields)-1]
	}
	j.Schedule = strings.Join(fields, " ")
	if j.Schedule == "@reboot" {
		return Job{}, "@reboot runs at boot, not on a schedule: not monitored"
	}
	return j, ""
}

// unquote strips one pair of matching quotes.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// nameOK reports whether s is a ping monitor name.
func nameOK(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == ""
}
