package deploy

import (
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Networks map[string]any            `yaml:"networks"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	PullPolicy  string            `yaml:"pull_policy"`
	Command     []string          `yaml:"command"`
	Networks    []string          `yaml:"networks"`
	Volumes     []string          `yaml:"volumes"`
	Profiles    []string          `yaml:"profiles"`
	Environment map[string]string `yaml:"environment"`
}

// port is the port of a host:port flag value.
func port(t *testing.T, where, hostPort string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(hostPort)
	if err != nil {
		t.Errorf("%s: %q is not host:port", where, hostPort)
	}
	return p
}

// TestCompose checks docker-compose.yml against the command line and
// against what deploy/deploytest relies on: services n1-n3 (node id =
// service name), agent-eu and agent-us, target; networks control, eu, us.
func TestCompose(t *testing.T) {
	data, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	cflags, aflags := controlFlags(t), agentFlags(t)

	var nodes []string
	controlArgs := map[string]map[string]string{}
	for name, s := range f.Services {
		if s.PullPolicy != "never" {
			t.Errorf("service %s: pull_policy %q, want never (nothing is pulled)", name, s.PullPolicy)
		}
		for _, n := range s.Networks {
			if _, ok := f.Networks[n]; !ok {
				t.Errorf("service %s: network %s is not declared", name, n)
			}
		}
		if len(s.Command) > 0 && s.Command[0] == "control" {
			nodes = append(nodes, name)
			controlArgs[name] = parseArgs(t, "service "+name, s.Command[1:], cflags)
			if !strings.Contains(s.Environment["LOOKOUT_ADMIN_TOKEN"], "${LOOKOUT_ADMIN_TOKEN") {
				t.Errorf("service %s: the admin token should come from LOOKOUT_ADMIN_TOKEN", name)
			}
		}
	}
	slices.Sort(nodes)
	if !slices.Equal(nodes, []string{"n1", "n2", "n3"}) {
		t.Fatalf("control services %v, want n1, n2, n3", nodes)
	}
	httpPort := ""
	for _, n := range nodes {
		a := controlArgs[n]
		where := "service " + n
		if a["node-id"] != n || a["advertise-addr"] != n {
			t.Errorf("%s: --node-id %q and --advertise-addr %q must be the service name", where, a["node-id"], a["advertise-addr"])
		}
		if a["bootstrap-expect"] != strconv.Itoa(len(nodes)) {
			t.Errorf("%s: --bootstrap-expect %q, want %d", where, a["bootstrap-expect"], len(nodes))
		}
		var want []string
		for _, o := range nodes {
			if o != n {
				want = append(want, o+":"+port(t, where, controlArgs[o]["gossip-addr"]))
			}
		}
		if got := strings.Split(a["join"], ","); !slices.Equal(got, want) {
			t.Errorf("%s: --join %v, want the other nodes' gossip addresses %v", where, got, want)
		}
		if !slices.ContainsFunc(f.Services[n].Volumes, func(v string) bool {
			vol, path, _ := strings.Cut(v, ":")
			_, declared := f.Volumes[vol]
			return declared && path == a["data-dir"]
		}) {
			t.Errorf("%s: no named volume at --data-dir %q", where, a["data-dir"])
		}
		if !slices.Equal(f.Services[n].Networks, []string{"control"}) {
			t.Errorf("%s: networks %v, want only control", where, f.Services[n].Networks)
		}
		httpPort = port(t, where, a["http-addr"])
	}

	for _, region := range []string{"eu", "us"} {
		name := "agent-" + region
		s, ok := f.Services[name]
		if !ok || len(s.Command) == 0 || s.Command[0] != "agent" {
			t.Errorf("no service %s running lookout agent", name)
			continue
		}
		where := "service " + name
		a := parseArgs(t, where, s.Command[1:], aflags)
		if a["region"] != region {
			t.Errorf("%s: --region %q, want %s", where, a["region"], region)
		}
		var want []string
		for _, n := range nodes {
			want = append(want, "http://"+n+":"+httpPort)
		}
		if got := strings.Split(a["control"], ","); !slices.Equal(got, want) {
			t.Errorf("%s: --control %v, want every control node %v", where, got, want)
		}
		if a["token"] != "${LOOKOUT_AGENT_TOKEN_"+strings.ToUpper(region)+":-}" {
			t.Errorf("%s: --token %q, want it from LOOKOUT_AGENT_TOKEN_%s", where, a["token"], strings.ToUpper(region))
		}
		if port(t, where, a["http-addr"]) != "8090" {
			t.Errorf("%s: --http-addr %q: deploytest pings the agent on 8090", where, a["http-addr"])
		}
		// Its region's network and the control network: disconnecting the
		// latter cuts the region off.
		if !slices.Equal(s.Networks, []string{"control", region}) {
			t.Errorf("%s: networks %v, want [control %s]", where, s.Networks, region)
		}
		if !slices.Contains(s.Profiles, "agents") {
			t.Errorf("%s: not in the agents profile (it cannot start before its token exists)", where)
		}
		if !slices.Contains(f.Services["target"].Networks, region) {
			t.Errorf("target is not on network %s", region)
		}
	}
	if slices.Contains(f.Services["target"].Networks, "control") {
		t.Error("target is on the control network: only the agents should reach it")
	}
	if c := f.Services["target"].Command; !slices.Contains(c, "0.0.0.0:8081") {
		t.Errorf("target command %v: deploytest's check probes http://target:8081/", c)
	}
}

// TestComposeTLS checks docker-compose.tls.yml: the nodes' LOOKOUT_TLS_*
// variables are flags of lookout control and name their own certificate
// files (as deploy/certs writes them); the agents' commands are valid and
// dial every node over https.
func TestComposeTLS(t *testing.T) {
	data, err := os.ReadFile("docker-compose.tls.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("docker-compose.tls.yml: %v", err)
	}
	cflags, aflags := controlFlags(t), agentFlags(t)
	for _, n := range []string{"n1", "n2", "n3"} {
		s := f.Services[n]
		want := map[string]string{"LOOKOUT_TLS_CERT": "/tls/" + n + ".crt", "LOOKOUT_TLS_KEY": "/tls/" + n + ".key", "LOOKOUT_TLS_CA": "/tls/ca.crt"}
		for k, v := range want {
			if s.Environment[k] != v {
				t.Errorf("service %s: %s=%q, want %q", n, k, s.Environment[k], v)
			}
			if _, ok := cflags[strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(k, "LOOKOUT_")), "_", "-")]; !ok {
				t.Errorf("service %s: %s sets no flag of lookout control", n, k)
			}
		}
		if !slices.Contains(s.Volumes, "${LOOKOUT_TLS_DIR:-./tls}:/tls:ro") {
			t.Errorf("service %s: the certificates are not mounted at /tls: %v", n, s.Volumes)
		}
	}
	for _, region := range []string{"eu", "us"} {
		name := "agent-" + region
		s := f.Services[name]
		if len(s.Command) == 0 || s.Command[0] != "agent" {
			t.Errorf("service %s: command %v, want lookout agent", name, s.Command)
			continue
		}
		a := parseArgs(t, "docker-compose.tls.yml "+name, s.Command[1:], aflags)
		if a["control"] != "https://n1:8080,https://n2:8080,https://n3:8080" || a["region"] != region {
			t.Errorf("service %s: --control %q --region %q", name, a["control"], a["region"])
		}
		if a["ca-file"] != "/tls/ca.crt" || a["tls-cert"] != "/tls/"+name+".crt" || a["tls-key"] != "/tls/"+name+".key" {
			t.Errorf("service %s: --ca-file %q --tls-cert %q --tls-key %q, want the files deploy/certs writes", name, a["ca-file"], a["tls-cert"], a["tls-key"])
		}
	}
}
