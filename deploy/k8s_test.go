package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The parts of the Kubernetes objects the checks read.
type (
	k8sDoc struct {
		APIVersion string            `yaml:"apiVersion"`
		Kind       string            `yaml:"kind"`
		Metadata   k8sMetadata       `yaml:"metadata"`
		Spec       yaml.Node         `yaml:"spec"`
		StringData map[string]string `yaml:"stringData"`
		file       string
	}
	k8sMetadata struct {
		Name string `yaml:"name"`
	}
	k8sService struct {
		ClusterIP                string            `yaml:"clusterIP"`
		PublishNotReadyAddresses bool              `yaml:"publishNotReadyAddresses"`
		Selector                 map[string]string `yaml:"selector"`
		Ports                    []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	}
	k8sPodTemplate struct {
		Metadata struct {
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec k8sPodSpec `yaml:"spec"`
	}
	k8sPodSpec struct {
		EnableServiceLinks *bool          `yaml:"enableServiceLinks"`
		Containers         []k8sContainer `yaml:"containers"`
		Volumes            []struct {
			Name                  string `yaml:"name"`
			PersistentVolumeClaim *struct {
				ClaimName string `yaml:"claimName"`
			} `yaml:"persistentVolumeClaim"`
		} `yaml:"volumes"`
	}
	k8sContainer struct {
		Name  string   `yaml:"name"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
		Env   []struct {
			Name      string `yaml:"name"`
			Value     string `yaml:"value"`
			ValueFrom *struct {
				SecretKeyRef *struct {
					Name string `yaml:"name"`
					Key  string `yaml:"key"`
				} `yaml:"secretKeyRef"`
				FieldRef *struct {
					FieldPath string `yaml:"fieldPath"`
				} `yaml:"fieldRef"`
			} `yaml:"valueFrom"`
		} `yaml:"env"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	k8sStatefulSet struct {
		ServiceName         string           `yaml:"serviceName"`
		Replicas            int              `yaml:"replicas"`
		PodManagementPolicy string           `yaml:"podManagementPolicy"`
		Selector            k8sSelector      `yaml:"selector"`
		Template            k8sPodTemplate   `yaml:"template"`
		VolumeClaimTemplate []k8sDocNameOnly `yaml:"volumeClaimTemplates"`
	}
	k8sDeployment struct {
		Replicas int                   `yaml:"replicas"`
		Strategy struct{ Type string } `yaml:"strategy"`
		Selector k8sSelector           `yaml:"selector"`
		Template k8sPodTemplate        `yaml:"template"`
	}
	k8sSelector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	}
	k8sDocNameOnly struct {
		Metadata k8sMetadata `yaml:"metadata"`
	}
)

// k8sDocs reads every document of the YAML files in k8s/ except the
// kustomization, and checks the kustomization lists exactly those files.
func k8sDocs(t *testing.T) []k8sDoc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("k8s", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []k8sDoc
	var names []string
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		names = append(names, filepath.Base(f))
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var d k8sDoc
			if err := dec.Decode(&d); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if d.APIVersion == "" || d.Kind == "" || d.Metadata.Name == "" {
				t.Errorf("%s: a document without apiVersion, kind or metadata.name", f)
			}
			d.file = f
			docs = append(docs, d)
		}
	}
	var k struct {
		Resources []string `yaml:"resources"`
	}
	data, err := os.ReadFile(filepath.Join("k8s", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	slices.Sort(k.Resources)
	if !slices.Equal(k.Resources, names) {
		t.Errorf("kustomization.yaml resources %v, want the files %v", k.Resources, names)
	}
	return docs
}

func find(t *testing.T, docs []k8sDoc, kind, name string, spec any) k8sDoc {
	t.Helper()
	for _, d := range docs {
		if d.Kind == kind && d.Metadata.Name == name {
			if spec != nil {
				if err := d.Spec.Decode(spec); err != nil {
					t.Fatalf("%s %s: %v", kind, name, err)
				}
			}
			return d
		}
	}
	t.Fatalf("no %s %s in k8s/", kind, name)
	return k8sDoc{}
}

var k8sVar = regexp.MustCompile(`\$\(([A-Za-z0-9_]+)\)`)

// checkContainer checks what any lookout container needs: $(VAR) in its
// args defined in its env, secrets that exist, --data-dir on a volume,
// no service links. It returns the parsed flags.
func checkContainer(t *testing.T, docs []k8sDoc, where string, pod k8sPodSpec, flags flagSet, claimTemplates []string) map[string]string {
	t.Helper()
	if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
		t.Errorf("%s: enableServiceLinks must be false (a Service named lookout would set LOOKOUT_* variables, which lookout reads as flags)", where)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: want one container", where)
	}
	c := pod.Containers[0]
	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = true
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref := e.ValueFrom.SecretKeyRef
			s := find(t, docs, "Secret", ref.Name, nil)
			if _, ok := s.StringData[ref.Key]; !ok {
				t.Errorf("%s: env %s reads key %s, which Secret %s does not have", where, e.Name, ref.Key, ref.Name)
			}
		}
	}
	for _, a := range c.Args {
		for _, m := range k8sVar.FindAllStringSubmatch(a, -1) {
			if !env[m[1]] {
				t.Errorf("%s: argument %q uses $(%s), which the container's env does not define", where, a, m[1])
			}
		}
	}
	args := parseArgs(t, where, c.Args[1:], flags)
	mounted := false
	for _, m := range c.VolumeMounts {
		if m.MountPath != args["data-dir"] {
			continue
		}
		if slices.Contains(claimTemplates, m.Name) {
			mounted = true
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.PersistentVolumeClaim != nil {
				find(t, docs, "PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName, nil)
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("%s: --data-dir %q is not on a persistent volume", where, args["data-dir"])
	}
	return args
}

func containerPort(t *testing.T, where string, c k8sContainer, name string) string {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return strconv.Itoa(p.ContainerPort)
		}
	}
	t.Errorf("%s: no container port named %s", where, name)
	return ""
}

func TestKubernetesControl(t *testing.T) {
	docs := k8sDocs(t)
	var sts k8sStatefulSet
	find(t, docs, "StatefulSet", "lookout", &sts)
	where := "StatefulSet lookout"
	var claims []string
	for _, v := range sts.VolumeClaimTemplate {
		claims = append(claims, v.Metadata.Name)
	}
	a := checkContainer(t, docs, where, sts.Template.Spec, controlFlags(t), claims)
	c := sts.Template.Spec.Containers[0]
	if c.Args[0] != "control" {
		t.Fatalf("%s: args start with %q, want control", where, c.Args[0])
	}
	if a["bootstrap-expect"] != strconv.Itoa(sts.Replicas) || sts.Replicas != 3 {
		t.Errorf("%s: replicas %d and --bootstrap-expect %q, want 3 and 3", where, sts.Replicas, a["bootstrap-expect"])
	}
	if sts.PodManagementPolicy != "Parallel" {
		t.Errorf("%s: podManagementPolicy %q: the pods must start together to meet (Parallel)", where, sts.PodManagementPolicy)
	}
	if a["node-id"] != "$(POD_NAME)" {
		t.Errorf("%s: --node-id %q, want $(POD_NAME) (stable in a StatefulSet)", where, a["node-id"])
	}
	for k, v := range sts.Selector.MatchLabels {
		if sts.Template.Metadata.Labels[k] != v {
			t.Errorf("%s: the selector's label %s=%s is not on the pods", where, k, v)
		}
	}

	var peers k8sService
	find(t, docs, "Service", sts.ServiceName, &peers)
	if peers.ClusterIP != "None" || !peers.PublishNotReadyAddresses {
		t.Errorf("Service %s: want headless (clusterIP: None) with publishNotReadyAddresses (nodes meet before they are ready)", sts.ServiceName)
	}
	// Pods reach each other at <set>-<i>.<headless service>.<namespace>.svc.
	podHost := func(i int) string {
		return fmt.Sprintf("%s-%d.%s.$(POD_NAMESPACE).svc", "lookout", i, sts.ServiceName)
	}
	gossip := port(t, where, a["gossip-addr"])
	var join []string
	for i := range sts.Replicas {
		join = append(join, podHost(i)+":"+gossip)
	}
	if got := strings.Split(a["join"], ","); !slices.Equal(got, join) {
		t.Errorf("%s: --join %v, want every pod %v", where, got, join)
	}
	self := "$(POD_NAME)." + sts.ServiceName + ".$(POD_NAMESPACE).svc"
	if want := self + ":" + port(t, where, a["raft-addr"]); a["advertise-raft"] != want {
		t.Errorf("%s: --advertise-raft %q, want %q", where, a["advertise-raft"], want)
	}
	if want := self + ":" + port(t, where, a["http-addr"]); a["advertise-http"] != want {
		t.Errorf("%s: --advertise-http %q, want %q", where, a["advertise-http"], want)
	}
	if containerPort(t, where, c, "http") != port(t, where, a["http-addr"]) ||
		containerPort(t, where, c, "raft") != port(t, where, a["raft-addr"]) ||
		containerPort(t, where, c, "gossip-tcp") != gossip || containerPort(t, where, c, "gossip-udp") != gossip {
		t.Errorf("%s: container ports do not match the listeners' flags", where)
	}
	// The client Service routes to the same pods' HTTP port.
	var svc k8sService
	find(t, docs, "Service", "lookout", &svc)
	for k, v := range svc.Selector {
		if sts.Template.Metadata.Labels[k] != v {
			t.Errorf("Service lookout: selector %s=%s matches no control pod", k, v)
		}
	}
	if len(svc.Ports) != 1 || svc.Ports[0].TargetPort != "http" {
		t.Errorf("Service lookout: want one port targeting http: %+v", svc.Ports)
	}
}

func TestKubernetesAgent(t *testing.T) {
	docs := k8sDocs(t)
	var sts k8sStatefulSet
	find(t, docs, "StatefulSet", "lookout", &sts)
	var d k8sDeployment
	find(t, docs, "Deployment", "lookout-agent-eu", &d)
	where := "Deployment lookout-agent-eu"
	a := checkContainer(t, docs, where, d.Template.Spec, agentFlags(t), nil)
	c := d.Template.Spec.Containers[0]
	if c.Args[0] != "agent" {
		t.Fatalf("%s: args start with %q, want agent", where, c.Args[0])
	}
	if d.Replicas != 1 || d.Strategy.Type != "Recreate" {
		t.Errorf("%s: replicas %d, strategy %q: one pod owns the buffer's volume (1, Recreate)", where, d.Replicas, d.Strategy.Type)
	}
	// Every control pod, on its HTTP port.
	ctl := checkContainer(t, docs, "StatefulSet lookout", sts.Template.Spec, controlFlags(t), []string{"data"})
	var want []string
	for i := range sts.Replicas {
		want = append(want, fmt.Sprintf("http://lookout-%d.%s.$(POD_NAMESPACE).svc:%s", i, sts.ServiceName, port(t, "control", ctl["http-addr"])))
	}
	if got := strings.Split(a["control"], ","); !slices.Equal(got, want) {
		t.Errorf("%s: --control %v, want every control pod %v", where, got, want)
	}
	for _, f := range []string{"token", "region", "data-dir", "http-addr"} {
		if a[f] == "" {
			t.Errorf("%s: no --%s", where, f)
		}
	}
	if containerPort(t, where, c, "ingest") != port(t, where, a["http-addr"]) {
		t.Errorf("%s: container port ingest is not --http-addr's", where)
	}
	var svc k8sService
	find(t, docs, "Service", "lookout-agent-eu", &svc)
	for k, v := range svc.Selector {
		if d.Template.Metadata.Labels[k] != v {
			t.Errorf("Service lookout-agent-eu: selector %s=%s matches no agent pod", k, v)
		}
	}
}
