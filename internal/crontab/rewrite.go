package crontab

import (
	"sort"
	"strings"
)

// RewriteOptions say how to wrap the jobs.
type RewriteOptions struct {
	// Lookout is the lookout binary to run (an absolute path: cron's PATH
	// is short).
	Lookout string
	// Env is set at the top of the crontab, each variable only when the
	// crontab does not set it already (LOOKOUT_ADDR, LOOKOUT_INGEST_KEY:
	// what lookout exec needs to report).
	Env map[string]string
}

// Rewrite returns the crontab with each job's command wrapped as
// "LOOKOUT exec NAME -- COMMAND", so every run reports to its monitor. A
// job already wrapped, every other line and every problem line stay as
// they are, so rewriting twice changes nothing more. A command that is
// not a plain program with arguments runs through /bin/sh -c, so pipes,
// lists and redirections keep their meaning. A command that uses cron's %
// (the rest of the line as standard input) cannot be quoted safely: it is
// left as it is and listed in the second result.
func (f *File) Rewrite(o RewriteOptions) (string, []Job) {
	out := make([]string, len(f.lines))
	copy(out, f.lines)
	var skipped []Job
	for _, j := range f.jobs {
		if j.Wrapped {
			continue
		}
		if hasCronPercent(j.Command) {
			skipped = append(skipped, j)
			continue
		}
		out[j.Line-1] = j.prefix + o.Lookout + " exec " + j.Name + " -- " + shellCommand(j.Command)
	}
	var head []string
	keys := make([]string, 0, len(o.Env))
	for k := range o.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !f.env[k] && o.Env[k] != "" {
			head = append(head, k+"="+o.Env[k])
		}
	}
	if len(out) == 0 && len(head) == 0 {
		return "", skipped
	}
	return strings.Join(append(head, out...), "\n") + "\n", skipped
}

// plainChars are those of a command that needs no shell.
const plainChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,@+="

// shellCommand is the command as lookout exec's arguments: as it is when
// it is a plain program with arguments, else through /bin/sh -c in single
// quotes.
func shellCommand(cmd string) string {
	plain := true
	for i, w := range strings.Fields(cmd) {
		if strings.Trim(w, plainChars) != "" || i == 0 && strings.Contains(w, "=") {
			plain = false
			break
		}
	}
	if plain {
		return strings.Join(strings.Fields(cmd), " ")
	}
	return "/bin/sh -c '" + strings.ReplaceAll(cmd, "'", `'\''`) + "'"
}

// hasCronPercent tells whether cmd has a % that cron turns into a newline
// (one without a backslash before it).
func hasCronPercent(cmd string) bool {
	for i := 0; i < len(cmd); i++ {
		switch cmd[i] {
		case '\\':
			i++
		case '%':
			return true
		}
	}
	return false
}
