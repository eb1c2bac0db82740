package cli

import (
	"errors"
	"io"
	"math"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

func TestMemoryLimitFlagParses(t *testing.T) {
	for in, want := range map[string]int64{
		"1GiB": 1 << 30, "900MiB": 900 << 20, "512KiB": 512 << 10, "2TiB": 2 << 40, "4096": 4096, "4096B": 4096, " 1 GiB ": 1 << 30,
		"0": math.MaxInt64, "off": math.MaxInt64,
	} {
		var m memoryLimit
		if err := m.Set(in); err != nil || m.auto || m.bytes != want {
			t.Errorf("Set(%q) = %+v, %v; want %d bytes", in, m, err, want)
		}
	}
	for _, in := range []string{"", "1GB", "1.5GiB", "-1GiB", "GiB", "auto2", "99999999999TiB"} {
		var m memoryLimit
		if err := m.Set(in); err == nil {
			t.Errorf("Set(%q) = %+v, want an error", in, m)
		}
	}
	var m memoryLimit
	if err := m.Set("auto"); err != nil || !m.auto || m.String() != "auto" {
		t.Errorf("Set(auto) = %+v, %v", m, err)
	}
	for in, want := range map[string]string{"1GiB": "1GiB", "1536MiB": "1536MiB", "1000": "1000B", "off": "off"} {
		if err := m.Set(in); err != nil || m.String() != want {
			t.Errorf("Set(%q).String() = %q, %v; want %q", in, m.String(), err, want)
		}
	}
}

func TestMemoryLimitAuto(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	noEnv := func(string) string { return "" }
	cgroupOf := func(n uint64, err error) func() (uint64, error) { return func() (uint64, error) { return n, err } }
	auto := memoryLimit{auto: true}
	cases := []struct {
		name    string
		m       memoryLimit
		env     func(string) string
		cgroup  func() (uint64, error)
		limit   int64
		source  string
		wantErr bool
	}{
		{"no cgroup", auto, noEnv, cgroupOf(0, memlimit.ErrNoCgroup), defaultMemoryLimit, "default", false},
		{"a cgroup without a limit", auto, noEnv, cgroupOf(0, memlimit.ErrNoLimit), defaultMemoryLimit, "default", false},
		{"a cgroup's limit", auto, noEnv, cgroupOf(4<<30, nil), 3 << 30, "cgroup", false},
		{"an unreadable cgroup", auto, noEnv, cgroupOf(0, errors.New("permission denied")), defaultMemoryLimit, "default", true},
		{"the flag wins", memoryLimit{bytes: 700 << 20}, noEnv, cgroupOf(4<<30, nil), 700 << 20, "--memory-limit", false},
		{"off", memoryLimit{bytes: math.MaxInt64}, noEnv, cgroupOf(4<<30, nil), math.MaxInt64, "--memory-limit", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			debug.SetMemoryLimit(math.MaxInt64)
			limit, source, err := applyMemoryLimit(c.m, c.env, c.cgroup)
			if limit != c.limit || source != c.source || (err != nil) != c.wantErr {
				t.Fatalf("applyMemoryLimit = %d, %q, %v; want %d, %q, error %v", limit, source, err, c.limit, c.source, c.wantErr)
			}
			if got := debug.SetMemoryLimit(-1); got != c.limit {
				t.Fatalf("the runtime's limit is %d, want %d", got, c.limit)
			}
		})
	}
	// GOMEMLIMIT set: the runtime read it at start; auto keeps it.
	debug.SetMemoryLimit(300 << 20)
	env := func(k string) string {
		if k == "GOMEMLIMIT" {
			return "300MiB"
		}
		return ""
	}
	limit, source, err := applyMemoryLimit(auto, env, cgroupOf(4<<30, nil))
	if limit != 300<<20 || source != "GOMEMLIMIT" || err != nil || debug.SetMemoryLimit(-1) != 300<<20 {
		t.Fatalf("with GOMEMLIMIT: %d, %q, %v", limit, source, err)
	}
}

func TestControlTakesTheMemoryLimitFlag(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want memoryLimit
	}{
		{nil, nil, memoryLimit{auto: true}},
		{[]string{"--memory-limit", "900MiB"}, nil, memoryLimit{bytes: 900 << 20}},
		{nil, map[string]string{"LOOKOUT_MEMORY_LIMIT": "off"}, memoryLimit{bytes: math.MaxInt64}},
	} {
		c, err := parseControl(append([]string{"--dev"}, tc.args...), env(tc.env), io.Discard)
		if err != nil || c.memoryLimit != tc.want {
			t.Errorf("%v %v: memory limit %+v, %v; want %+v", tc.args, tc.env, c.memoryLimit, err, tc.want)
		}
	}
	if _, err := parseControl([]string{"--dev", "--memory-limit", "lots"}, env(nil), io.Discard); err == nil {
		t.Error("--memory-limit lots was taken")
	}
}
