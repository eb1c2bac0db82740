package manage_test

import (
	"strings"
	"testing"
)

// TestHumanVisibleNamesAreChecked: a manifest whose check name, display
// name, project or tag holds a control character, a bidirectional
// override or nothing visible is refused with 422 and the field's code,
// on create, replace and apply; stored monitors are untouched.
func TestHumanVisibleNamesAreChecked(t *testing.T) {
	a := newAPI(t)
	status, created, _ := a.do("POST", "/api/v1/monitors", ping("backup", map[string]any{"display_name": "Backup"}))
	if status != 201 {
		t.Fatalf("create: %d %v", status, created)
	}
	uuid := created["uuid"].(string)
	for _, tc := range []struct {
		name     string
		manifest map[string]any
		code     string
	}{
		{"display_name with ESC", ping("backup", map[string]any{"display_name": "\x1b[2J\x1b[31mcleared"}), "display_name_invalid"},
		{"display_name with NUL", ping("backup", map[string]any{"display_name": "a\x00b"}), "display_name_invalid"},
		{"display_name with an RTL override", ping("backup", map[string]any{"display_name": "pay\u202eexe.pdf"}), "display_name_invalid"},
		{"display_name of zero-width characters", ping("backup", map[string]any{"display_name": "\u200b\u200d\ufeff"}), "display_name_invalid"},
		{"project with a bidi isolate", ping("backup", map[string]any{"project": "\u2067ops"}), "project_invalid"},
		{"tag of zero-width characters", ping("backup", map[string]any{"tags": []string{"\u2060"}}), "tags_invalid"},
		{"check name of zero-width characters", httpCheck("\u200b\u200c", "https://example.com/"), "name_invalid"},
		{"check name with an RTL override", httpCheck("home\u202epage", "https://example.com/"), "name_invalid"},
		{"check name with ESC", httpCheck("home\x1b]8;;", "https://example.com/"), "name_invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requests := []struct {
				method, path, key string
				body              any
			}{
				{"POST", "/api/v1/monitors", "manifest", tc.manifest},
				{"POST", "/api/v1/monitors/apply", "monitors.0", bundle(tc.manifest)},
			}
			if tc.manifest["kind"] == "ping" {
				requests = append(requests, struct {
					method, path, key string
					body              any
				}{"PUT", "/api/v1/monitors/" + uuid, "manifest", tc.manifest})
			}
			for _, r := range requests {
				status, body, _ := a.do(r.method, r.path, r.body)
				if status != 422 || strings.Join(codes(body, r.key), ",") != tc.code {
					t.Fatalf("%s %s: %d %v; want 422 %s", r.method, r.path, status, body, tc.code)
				}
			}
		})
	}
	status, got, _ := a.do("GET", "/api/v1/monitors/"+uuid, nil)
	if status != 200 || got["display_name"] != "Backup" || got["project"] != nil {
		t.Fatalf("the stored monitor changed: %d %v", status, got)
	}
}
