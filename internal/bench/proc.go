package bench

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Memory is a process's resident memory, from /proc/<pid>/status.
type Memory struct {
	// RSS is VmRSS: all resident pages, Anon + File (+ shared memory).
	RSS int64
	// Anon is RssAnon: the Go heap, stacks and anonymous maps (Badger's
	// memtables and caches live here).
	Anon int64
	// File is RssFile: resident pages of mapped files (Badger maps its
	// tables and value log).
	File int64
	// Peak is VmHWM, the highest RSS since the process started.
	Peak int64
}

// ReadMemory reads process pid's Memory (Linux only).
func ReadMemory(pid int) (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			m.RSS = kb << 10
		case "RssAnon":
			m.Anon = kb << 10
		case "RssFile":
			m.File = kb << 10
		case "VmHWM":
			m.Peak = kb << 10
		}
	}
	if m.RSS == 0 {
		return m, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
	}
	return m, nil
}

// DiskUsage is the space the files under dir take on disk, as du counts it
// (allocated blocks: a sparse or preallocated file counts what it holds).
func DiskUsage(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) { // removed while walking (compaction)
				return nil
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		} else {
			total += info.Size()
		}
		return nil
	})
	return total, err
}

// MiB formats a byte count in MiB.
func MiB(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// ProcCPU is the user+system CPU time process pid has used (Linux:
// /proc/<pid>/stat, in clock ticks of 10 ms).
func ProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis start with field 3 (state).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var total time.Duration
	for _, v := range f[11:13] { // utime, stime (fields 14, 15)
		ticks, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		total += time.Duration(ticks) * 10 * time.Millisecond
	}
	return total, nil
}
