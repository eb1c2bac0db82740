package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"go.yaml.in/yaml/v3"
)

// maxYAMLNodes bounds the nodes visited while converting, so that nested aliases cannot
// blow up a small document.
const maxYAMLNodes = 1_000_000

// BundleFromYAML converts a YAML document (a bundle, or any value) to JSON, so that
// ParseBundle and Parse stay the one validator. JSON is YAML, so JSON input converts to
// itself. Aliases and merge keys (<<) are expanded; keys are read as strings; a value
// that JSON cannot hold (.inf, .nan) is an error. An empty document converts to null.
func BundleFromYAML(b []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	budget := maxYAMLNodes
	v, err := fromNode(&doc, &budget)
	if err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	return json.Marshal(v)
}

// fromNode converts a YAML node to the value encoding/json would decode from its JSON.
func fromNode(n *yaml.Node, budget *int) (any, error) {
	if *budget--; *budget < 0 {
		return nil, errors.New("document too large after expanding aliases")
	}
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return fromNode(n.Content[0], budget)
	case yaml.AliasNode:
		return fromNode(n.Alias, budget)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := fromNode(c, budget)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		return out, fromMapping(n, out, budget)
	default:
		return fromScalar(n)
	}
}

// fromMapping adds the pairs of mapping node n to out. Keys given in n win over keys
// merged in through <<, whatever their order, as YAML's merge key type says.
func fromMapping(n *yaml.Node, out map[string]any, budget *int) error {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: a mapping key must be a scalar", k.Line)
		}
		val, err := fromNode(v, budget)
		if err != nil {
			return err
		}
		out[k.Value] = val
	}
	for _, m := range merges {
		if m.Kind == yaml.AliasNode {
			m = m.Alias
		}
		srcs := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			srcs = m.Content
		}
		for _, src := range srcs {
			if src.Kind == yaml.AliasNode {
				src = src.Alias
			}
			if src.Kind != yaml.MappingNode {
				return fmt.Errorf("line %d: << must merge a mapping", m.Line)
			}
			merged := map[string]any{}
			if err := fromMapping(src, merged, budget); err != nil {
				return err
			}
			for k, v := range merged {
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
		}
	}
	return nil
}

// fromScalar converts a scalar by its resolved tag; strings, timestamps and unknown tags
// keep their text.
func fromScalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool", "!!int":
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("line %d: %s is not a JSON number", n.Line, n.Value)
		}
		return f, nil
	default:
		return n.Value, nil
	}
}

// BundleToYAML renders a bundle as block-style YAML with the keys in the order of the
// JSON form, for lookout export. BundleFromYAML reads it back to the same JSON.
func BundleToYAML(b Bundle) ([]byte, error) {
	js, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(js, &doc); err != nil {
		return nil, err
	}
	plain(&doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// plain drops the flow and quoting styles that JSON input carries; the encoder still
// quotes a string whenever it would otherwise read back as another type.
func plain(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		plain(c)
	}
}
