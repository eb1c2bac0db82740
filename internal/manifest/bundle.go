package manifest

import (
	"encoding/json"
	"sort"
)

// Bundle is a whole account's monitors. Entries are matched by (kind, name),
// never by uuid; the checks (http_check, ssl_check, tcp_check, dns_check) share one name
// space, ping has its own.
type Bundle struct {
	ManifestVersion int        `json:"manifest_version"`
	Monitors        []Manifest `json:"monitors"`
}

// ParseBundle decodes and validates a bundle and returns every problem at once: the
// bundle's own under KeyBundle (invalid_json, bundle_invalid, monitors_missing,
// field_unknown), and each entry's under EntryKey(i) (entry_not_object, the entry's own
// codes, duplicate_entry and name_taken_by_other_kind at the later of two clashing
// entries). An entry may leave out manifest_version; if it gives one, it must be 1.
// The bundle is meaningful only when there are no errors; Monitors then holds the
// entries in order, in canonical form.
func ParseBundle(raw []byte, opts Options) (Bundle, BundleErrors) {
	var errs BundleErrors
	bundleErr := func(code, msg string) (Bundle, BundleErrors) {
		errs.Add(KeyBundle, Error{Code: code, Message: msg})
		return Bundle{}, errs
	}
	if !json.Valid(raw) {
		return bundleErr(CodeInvalidJSON, "the bundle is not valid JSON")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return bundleErr(CodeBundleInvalid, "the bundle must be a JSON object")
	}
	if r, ok := top["manifest_version"]; !ok || isNull(r) {
		errs.Add(KeyBundle, Error{Field: "manifest_version", Code: CodeBundleInvalid, Message: "manifest_version is required (1)"})
	} else if n, ok := parseInt(r); !ok || n != Version {
		errs.Add(KeyBundle, Error{Field: "manifest_version", Code: CodeBundleInvalid, Message: "manifest_version must be 1, got " + excerpt(r)})
	}
	var entries []json.RawMessage
	if r, ok := top["monitors"]; !ok || isNull(r) || json.Unmarshal(r, &entries) != nil {
		errs.Add(KeyBundle, Error{Field: "monitors", Code: CodeMonitorsMissing, Message: "monitors must be an array of manifests"})
	}
	var extra []string
	for k := range top {
		if k != "manifest_version" && k != "monitors" {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		errs.Add(KeyBundle, Error{Field: k, Code: CodeFieldUnknown, Message: k + " is not a known field of a bundle"})
	}

	b := Bundle{ManifestVersion: Version, Monitors: make([]Manifest, len(entries))}
	seen := map[[2]string]int{} // (name space, name) -> index of the first entry
	for i, r := range entries {
		key := EntryKey(i)
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(r, &fields); err != nil || fields == nil {
			errs.Add(key, Error{Code: CodeEntryNotObject, Message: key + " must be an object"})
			continue
		}
		m, es := parseFields(fields, opts, true)
		b.Monitors[i] = m
		errs.Add(key, es...)
		if m.Name == "" || !KnownKind(m.Kind) {
			continue
		}
		space := "check"
		if m.Kind == KindPing {
			space = KindPing
		}
		id := [2]string{space, m.Name}
		first, dup := seen[id]
		switch {
		case !dup:
			seen[id] = i
		case b.Monitors[first].Kind == m.Kind:
			errs.Add(key, Error{Field: "name", Code: CodeDuplicateEntry, Message: "name " + quote(m.Name) + " repeats the " + m.Kind + " of " + EntryKey(first)})
		default:
			errs.Add(key, Error{Field: "name", Code: CodeNameTakenByOtherKind, Message: "name " + quote(m.Name) + " is taken by the " + b.Monitors[first].Kind + " of " + EntryKey(first)})
		}
	}
	return b, errs
}

// NewBundle returns the bundle of an export: the manifests in canonical form without
// uuid, ordered by kind (ping, http_check, ssl_check, tcp_check, dns_check) and then by
// name. Secrets are as given: the caller masks them (Masked) for an export.
func NewBundle(ms []Manifest) Bundle {
	rank := map[string]int{KindPing: 0, KindHTTP: 1, KindSSL: 2, KindTCP: 3, KindDNS: 4}
	out := make([]Manifest, len(ms))
	for i, m := range ms {
		out[i] = Canonical(m)
		out[i].UUID = ""
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return rank[out[i].Kind] < rank[out[j].Kind]
		}
		return out[i].Name < out[j].Name
	})
	return Bundle{ManifestVersion: Version, Monitors: out}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
