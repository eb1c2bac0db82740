package manifest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Dependency names a monitor of the same account that a monitor depends on
// (decisions.md 12): while it is down, the dependent's failure alerts are
// held.
type Dependency struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// String is "kind name".
func (d Dependency) String() string { return d.Kind + " " + d.Name }

// MaxDependencies bounds depends_on.
const MaxDependencies = 16

// The codes of depends_on.
const (
	CodeDependencyInvalid = "dependency_invalid" // added: depends_on's shape, or a monitor the account does not have
	CodeDependencyCycle   = "dependency_cycle"   // added: depends_on leads back to the monitor itself
)

// dependsOn decodes depends_on: at most MaxDependencies {kind, name}
// objects, no repeats, each a valid name for its kind. A monitor naming
// itself is a cycle. Whether the monitors exist is the account's matter
// (CheckDependencies).
func (d *decoder) dependsOn(self Manifest) []Dependency {
	r, present := d.raw("depends_on")
	if !present {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(r, &items); err != nil {
		d.add("depends_on", CodeDependencyInvalid, "must be an array of {\"kind\", \"name\"} objects, got %s", excerpt(r))
		return nil
	}
	if len(items) > MaxDependencies {
		d.add("depends_on", CodeDependencyInvalid, "may name at most %d monitors, got %d", MaxDependencies, len(items))
		return nil
	}
	var out []Dependency
	for i, raw := range items {
		var dep Dependency
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil || fields == nil || json.Unmarshal(raw, &dep) != nil || len(fields) != 2 || fields["kind"] == nil || fields["name"] == nil {
			d.add("depends_on", CodeDependencyInvalid, "item %d must be an object {\"kind\", \"name\"}", i)
			continue
		}
		switch {
		case dep.Kind != KindPing && dep.Kind != KindHTTP && dep.Kind != KindSSL:
			d.add("depends_on", CodeDependencyInvalid, "item %d: kind must be %s, got %q", i, kindsList, excerptString(dep.Kind))
		case !validName(dep.Kind, dep.Name):
			d.add("depends_on", CodeDependencyInvalid, "item %d: %q is not a %s name", i, excerptString(dep.Name), dep.Kind)
		case slices.Contains(out, dep):
			d.add("depends_on", CodeDependencyInvalid, "item %d repeats %s", i, dep)
		case dep.Kind == self.Kind && dep.Name == self.Name:
			d.add("depends_on", CodeDependencyCycle, "item %d is the monitor itself", i)
		default:
			out = append(out, dep)
		}
	}
	return out
}

// validName tells whether name is a valid name of a monitor of kind.
func validName(kind, name string) bool {
	var errs Errors
	d := &decoder{fields: map[string]json.RawMessage{"name": mustMarshal(name)}, errs: &errs}
	d.name(kind)
	return len(errs) == 0
}

func mustMarshal(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// CheckDependencies checks the depends_on of the account's monitors as
// they will be after a change: every one names a monitor of the account
// (dependency_invalid), and none leads back to itself (dependency_cycle).
// monitors is the whole account after the change (its stored monitors,
// with the changed ones replaced and the new ones added); only the
// entries listed in check are reported, by their index in monitors.
func CheckDependencies(monitors []Manifest, check []int) map[int]Errors {
	key := func(kind, name string) string { return kind + "\x00" + name }
	index := map[string]int{}
	for i, m := range monitors {
		index[key(m.Kind, m.Name)] = i
	}
	out := map[int]Errors{}
	for _, i := range check {
		m := monitors[i]
		for _, d := range m.DependsOn {
			if _, ok := index[key(d.Kind, d.Name)]; !ok {
				out[i] = append(out[i], Error{Field: "depends_on", Code: CodeDependencyInvalid,
					Message: fmt.Sprintf("depends_on names %s, which the account does not have (nor the bundle)", d)})
			}
		}
		if path := cycleFrom(monitors, index, key, i); path != nil {
			names := make([]string, len(path))
			for j, p := range path {
				names[j] = monitors[p].Kind + " " + monitors[p].Name
			}
			out[i] = append(out[i], Error{Field: "depends_on", Code: CodeDependencyCycle,
				Message: "depends_on makes a cycle: " + strings.Join(names, " -> ")})
		}
	}
	return out
}

// cycleFrom returns a path of depends_on from monitor start back to it
// (nil when there is none), by a depth-first walk.
func cycleFrom(monitors []Manifest, index map[string]int, key func(kind, name string) string, start int) []int {
	seen := map[int]bool{}
	var walk func(i int, path []int) []int
	walk = func(i int, path []int) []int {
		for _, d := range monitors[i].DependsOn {
			j, ok := index[key(d.Kind, d.Name)]
			switch {
			case !ok:
			case j == start:
				return append(append(path, i), j)
			case !seen[j]:
				seen[j] = true
				if p := walk(j, append(path, i)); p != nil {
					return p
				}
			}
		}
		return nil
	}
	return walk(start, nil)
}
