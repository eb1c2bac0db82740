package deploy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// unitService is the [Service] section of a unit: key -> values, in order.
func unitService(t *testing.T, file string) map[string][]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Errorf("%s: %q is not key=value", file, line)
			}
			out[k] = append(out[k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var envLine = regexp.MustCompile(`^#?(LOOKOUT_[A-Z0-9_]+)=(.*)$`)

// envExample is every LOOKOUT_ variable of an env file example, set or
// commented out, with its values.
func envExample(t *testing.T, file string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if m := envLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			out[m[1]] = append(out[m[1]], m[2])
		}
	}
	return out
}

// hardening is what both units must keep.
var hardening = map[string]string{
	"DynamicUser": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "NoNewPrivileges": "yes",
	"PrivateTmp": "yes", "PrivateDevices": "yes", "CapabilityBoundingSet": "", "RestrictSUIDSGID": "yes",
}

func checkUnit(t *testing.T, file string, svc map[string][]string) {
	t.Helper()
	for k, want := range hardening {
		if v := svc[k]; len(v) != 1 || v[0] != want {
			t.Errorf("%s: %s=%v, want %q", file, k, v, want)
		}
	}
	if len(svc["StateDirectory"]) != 1 || len(svc["EnvironmentFile"]) != 1 || len(svc["ExecStart"]) != 1 {
		t.Fatalf("%s: want one StateDirectory, EnvironmentFile and ExecStart: %v", file, svc)
	}
}

func TestSystemdControl(t *testing.T) {
	file := filepath.Join("systemd", "lookout-control.service")
	svc := unitService(t, file)
	checkUnit(t, file, svc)
	flags := controlFlags(t)
	exe := strings.Fields(svc["ExecStart"][0])
	if len(exe) < 2 || exe[0] != "/usr/local/bin/lookout" || exe[1] != "control" {
		t.Fatalf("%s: ExecStart %q, want /usr/local/bin/lookout control ...", file, exe)
	}
	a := parseArgs(t, file, exe[2:], flags)
	if want := "/var/lib/" + svc["StateDirectory"][0]; a["data-dir"] != want {
		t.Errorf("%s: --data-dir %q, want the StateDirectory %s", file, a["data-dir"], want)
	}
	// Every variable of the example sets a flag of lookout control.
	env := envExample(t, filepath.Join("systemd", "control.env.example"))
	for name := range env {
		flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "LOOKOUT_")), "_", "-")
		if _, ok := flags[flag]; !ok {
			t.Errorf("control.env.example: %s sets no flag (no --%s)", name, flag)
		}
	}
	for _, must := range []string{"LOOKOUT_ADMIN_TOKEN", "LOOKOUT_NODE_ID", "LOOKOUT_BOOTSTRAP_EXPECT", "LOOKOUT_JOIN", "LOOKOUT_ADVERTISE_ADDR"} {
		if _, ok := env[must]; !ok {
			t.Errorf("control.env.example: no %s", must)
		}
	}
}

var unitVar = regexp.MustCompile(`^\$\{?([A-Z0-9_]+)\}?$`)

func TestSystemdAgent(t *testing.T) {
	file := filepath.Join("systemd", "lookout-agent.service")
	svc := unitService(t, file)
	checkUnit(t, file, svc)
	flags := agentFlags(t)
	env := envExample(t, filepath.Join("systemd", "agent.env.example"))
	exe := strings.Fields(svc["ExecStart"][0])
	if len(exe) < 2 || exe[0] != "/usr/local/bin/lookout" || exe[1] != "agent" {
		t.Fatalf("%s: ExecStart %q, want /usr/local/bin/lookout agent ...", file, exe)
	}
	// ${VAR} is one argument; a bare $VAR at the end is the optional
	// flags, checked with each value the example gives it.
	args := exe[2:]
	var opts string
	if last := args[len(args)-1]; strings.HasPrefix(last, "$") && !strings.HasPrefix(last, "${") {
		opts = strings.TrimPrefix(last, "$")
		args = args[:len(args)-1]
	}
	for _, a := range args {
		if m := unitVar.FindStringSubmatch(a); m != nil {
			if _, ok := env[m[1]]; !ok {
				t.Errorf("%s: ExecStart uses %s, which agent.env.example does not set", file, a)
			}
		}
	}
	a := parseArgs(t, file, args, flags)
	if want := "/var/lib/" + svc["StateDirectory"][0]; a["data-dir"] != want {
		t.Errorf("%s: --data-dir %q, want the StateDirectory %s", file, a["data-dir"], want)
	}
	for _, f := range []string{"control", "token", "region"} {
		if a[f] == "" {
			t.Errorf("%s: no --%s", file, f)
		}
	}
	if opts != "" {
		if len(env[opts]) == 0 {
			t.Errorf("agent.env.example does not show %s", opts)
		}
		for _, v := range env[opts] {
			opt := parseArgs(t, "agent.env.example "+opts, strings.Fields(v), flags)
			for k := range opt {
				if _, dup := a[k]; dup {
					t.Errorf("agent.env.example %s repeats --%s of ExecStart", opts, k)
				}
			}
		}
	}
}

// TestSystemdVerify runs systemd-analyze verify on the units when the
// machine has it (with the binary path pointed at an existing file).
func TestSystemdVerify(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var units []string
	for _, u := range []string{"lookout-control.service", "lookout-agent.service"} {
		data, err := os.ReadFile(filepath.Join("systemd", u))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, u)
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(data), "/usr/local/bin/lookout", self)), 0o644); err != nil {
			t.Fatal(err)
		}
		units = append(units, p)
	}
	out, err := exec.Command(sa, append([]string{"verify"}, units...)...).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
