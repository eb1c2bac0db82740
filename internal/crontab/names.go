package crontab

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strconv"
	"strings"
)

// maxSlug leaves room for a suffix within the 64 characters of a name.
const maxSlug = 48

// slugWords is how many words of the command a slug takes.
const slugWords = 3

// nameBySlug names the jobs that have no name yet from their commands. A
// slug that an earlier job (in line order) or a given name already has
// gets a suffix from a hash of the job's schedule and command, so adding a
// job below others renames none of them.
func (f *File) nameBySlug(taken map[string]int) {
	for i := range f.jobs {
		j := &f.jobs[i]
		if j.Name != "" {
			continue
		}
		name := slug(j.Command)
		if _, dup := taken[name]; dup {
			sum := sha256.Sum256([]byte(j.Schedule + "\x00" + j.Zone + "\x00" + j.User + "\x00" + j.Command))
			base := name + "-" + hex.EncodeToString(sum[:3])
			name = base
			for k := 2; ; k++ { // the same line twice
				if _, dup := taken[name]; !dup {
					break
				}
				name = base + "-" + strconv.Itoa(k)
			}
		}
		taken[name] = j.Line
		j.Name = name
	}
}

// slug makes a name from a command: the program and its first words
// (base names, options left out), in lower case, with every other
// character a hyphen. "cd DIR && " before the command, variable
// assignments and what follows a pipe, a redirection or a list are left
// out: "/usr/local/bin/backup.sh --full > /dev/null" is "backup-sh".
func slug(command string) string {
	cmd := command
	for {
		c, rest, found := cutShellList(cmd)
		if found && isCD(c) && strings.TrimSpace(rest) != "" {
			cmd = rest
			continue
		}
		cmd = c
		break
	}
	var words []string
	for _, w := range strings.Fields(cmd) {
		if len(words) == 0 && strings.Contains(w, "=") {
			continue // FOO=bar before the program
		}
		if strings.HasPrefix(w, "-") {
			continue
		}
		words = append(words, path.Base(strings.Trim(w, `"'`)))
		if len(words) == slugWords {
			break
		}
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.Join(words, " ")) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	s := strings.TrimRight(b.String()[:min(b.Len(), maxSlug)], "-")
	if s == "" {
		return "job"
	}
	return s
}

// cutShellList splits a command at its first pipe, list operator or
// redirection: the first simple command, the rest, and whether there was
// a rest.
func cutShellList(cmd string) (string, string, bool) {
	if i := strings.IndexAny(cmd, "|;&<>`$("); i >= 0 {
		j := i + 1
		for j < len(cmd) && strings.IndexByte("|;&<>", cmd[j]) >= 0 {
			j++
		}
		return cmd[:i], cmd[j:], true
	}
	return cmd, "", false
}

// isCD tells whether a simple command is a cd.
func isCD(c string) bool {
	f := strings.Fields(c)
	return len(f) > 0 && f[0] == "cd"
}
