package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"lookout/internal/crontab"
	"lookout/internal/schedule"
)

// readCrontab reads file, or the user's crontab ("crontab -l"; none is
// empty).
func readCrontab(ctx context.Context, file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		return string(b), err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "crontab", "-l")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), "no crontab") {
			return "", nil
		}
		return "", fmt.Errorf("crontab -l: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// installCrontab saves the current crontab (old) to the backup file, then
// installs the rewritten one: FILE when --crontab was given, else with
// "crontab -".
func installCrontab(ctx context.Context, env manageEnv, tab *crontab.File, f syncFlags, addr, old string) error {
	out, err := rewritten(env, tab, f, addr)
	if err != nil {
		return err
	}
	if out == old {
		fmt.Fprintln(env.stdout, "The crontab already reports every job: nothing to install.")
		return nil
	}
	backup := f.backup
	stamp := time.Now().UTC().Format("20060102T150405Z")
	switch {
	case backup != "":
	case f.file != "":
		backup = f.file + ".lookout-backup-" + stamp
	default:
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("sync: no home directory for the backup (give --backup): %w", err)
		}
		backup = filepath.Join(home, "crontab.lookout-backup-"+stamp)
	}
	if err := os.WriteFile(backup, []byte(old), 0o600); err != nil {
		return fmt.Errorf("sync: save the backup: %w", err)
	}
	if f.file != "" {
		err = writeFileAtomic(f.file, []byte(out))
	} else {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "crontab", "-")
		cmd.Stdin, cmd.Stderr = strings.NewReader(out), &stderr
		if err = cmd.Run(); err != nil {
			err = fmt.Errorf("crontab -: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
	}
	if err != nil {
		return fmt.Errorf("sync: install the crontab (the old one is in %s): %w", backup, err)
	}
	_, err = fmt.Fprintf(env.stdout, "Installed the rewritten crontab; the old one is in %s.\n", backup)
	return err
}

// writeFileAtomic replaces path with data, keeping its mode.
func writeFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// syncZone is the zone of jobs without CRON_TZ= or TZ=: flag, else the
// host's (the cron daemon reads schedules in it), else UTC.
func syncZone(flagZone string, getenv func(string) string) (string, error) {
	if flagZone != "" {
		if _, err := schedule.LoadZone(flagZone); err != nil {
			return "", usageError{fmt.Sprintf("sync: --timezone: %v", err)}
		}
		return flagZone, nil
	}
	for _, z := range hostZones(getenv) {
		if _, err := schedule.LoadZone(z); err == nil && z != "" {
			return z, nil
		}
	}
	return schedule.DefaultZone, nil
}

// hostZones are the names this host's zone may be found under, best first:
// TZ, /etc/timezone, the target of /etc/localtime.
func hostZones(getenv func(string) string) []string {
	zones := []string{strings.TrimPrefix(getenv("TZ"), ":")}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		zones = append(zones, strings.TrimSpace(string(b)))
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok {
			zones = append(zones, name)
		}
	}
	return zones
}
