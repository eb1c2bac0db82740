package cli

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/hashicorp/go-hclog"
)

// cgroupShare is the part of the memory a node may use that it takes as
// its soft limit: the rest is for what the Go runtime does not count, the
// pages of Badger's tables, which are mapped into the process and count in
// its RSS (docs/performance.md, "A million monitors on three nodes").
const cgroupShare = 0.75

// defaultMemoryLimit is a node's soft memory limit when neither
// --memory-limit, GOMEMLIMIT nor a cgroup says otherwise: cgroupShare of
// 1 GiB, which holds what a node keeps at a million monitors (Badger's
// memtables and block cache, the state's caches, the leader's deadlines)
// with room for a bulk load, so that the collector runs before the heap
// doubles.
const defaultMemoryLimit = 768 << 20

// memoryLimit is --memory-limit: "auto" (the default) or a size in
// GOMEMLIMIT's syntax (1GiB, 900MiB, 1073741824; 0 or off: no limit).
type memoryLimit struct {
	auto  bool
	bytes int64 // without auto; math.MaxInt64: no limit
}

func (m *memoryLimit) String() string {
	switch {
	case m.auto:
		return "auto"
	case m.bytes == math.MaxInt64:
		return "off"
	}
	return formatBytes(m.bytes)
}

// Set parses v.
func (m *memoryLimit) Set(v string) error {
	switch strings.TrimSpace(v) {
	case "auto":
		*m = memoryLimit{auto: true}
		return nil
	case "0", "off":
		*m = memoryLimit{bytes: math.MaxInt64}
		return nil
	}
	n, err := parseBytes(v)
	if err != nil {
		return err
	}
	*m = memoryLimit{bytes: n}
	return nil
}

// units are GOMEMLIMIT's suffixes, longest first.
var units = []struct {
	suffix string
	shift  uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}, {"", 0}}

// parseBytes reads a size as the Go runtime reads GOMEMLIMIT: a whole
// number of bytes with an optional B, KiB, MiB, GiB or TiB.
func parseBytes(v string) (int64, error) {
	v = strings.TrimSpace(v)
	for _, u := range units {
		num, ok := strings.CutSuffix(v, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		if err != nil || n <= 0 || n > math.MaxInt64>>u.shift {
			break
		}
		return n << u.shift, nil
	}
	return 0, fmt.Errorf("%q is not a size: give a number of bytes with B, KiB, MiB, GiB or TiB (1GiB, 900MiB), 0 or off for none, or auto", v)
}

// formatBytes is n in the largest unit that divides it.
func formatBytes(n int64) string {
	for _, u := range units[:4] {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// applyMemoryLimit sets the Go runtime's soft memory limit from
// --memory-limit and returns it (math.MaxInt64: none) with where it came
// from. auto keeps the limit GOMEMLIMIT gave the runtime when it is set;
// else it takes cgroupShare of the cgroup's memory limit (a container's
// or a systemd unit's MemoryMax) when there is one; else
// defaultMemoryLimit. cgroup reads the cgroup's limit
// (memlimit.FromCgroup). An error reading it is returned beside the
// default, which is set.
func applyMemoryLimit(m memoryLimit, getenv func(string) string, cgroup func() (uint64, error)) (int64, string, error) {
	if !m.auto {
		debug.SetMemoryLimit(m.bytes)
		return m.bytes, "--memory-limit", nil
	}
	if getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1), "GOMEMLIMIT", nil
	}
	limit, source := int64(defaultMemoryLimit), "default"
	c, err := cgroup()
	switch {
	case err == nil && c < math.MaxInt64:
		limit, source, err = int64(float64(c)*cgroupShare), "cgroup", nil
	case errors.Is(err, memlimit.ErrNoLimit), errors.Is(err, memlimit.ErrNoCgroup), errors.Is(err, memlimit.ErrCgroupsNotSupported):
		err = nil
	case err != nil:
		err = fmt.Errorf("reading the cgroup's memory limit: %w", err)
	}
	debug.SetMemoryLimit(limit)
	return limit, source, err
}

// setMemoryLimit applies m (applyMemoryLimit, with this process's cgroup)
// and logs the limit the node runs with.
func setMemoryLimit(m memoryLimit, getenv func(string) string, log hclog.Logger) {
	limit, source, err := applyMemoryLimit(m, getenv, memlimit.FromCgroup)
	if err != nil {
		log.Warn("--memory-limit auto: using the default", "error", err)
	}
	if limit == math.MaxInt64 {
		log.Info("no memory limit", "from", source)
		return
	}
	log.Info("memory limit", "limit", formatBytes(limit), "from", source)
}
