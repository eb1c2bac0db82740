package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// cpuTime is the user+system CPU time the processes pids have used (Linux:
// /proc/<pid>/stat, in clock ticks of 10 ms); 0 and an error elsewhere.
func cpuTime(pids []int) (time.Duration, error) {
	var total time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, err
		}
		// The command name (field 2) may hold spaces; the fields after
		// its closing parenthesis start with field 3 (state).
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
		}
		for _, v := range f[11:13] { // utime, stime (fields 14, 15)
			ticks, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, err
			}
			total += time.Duration(ticks) * 10 * time.Millisecond
		}
	}
	return total, nil
}
