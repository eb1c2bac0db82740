package manage_test

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestPauseAndResume: pausing answers 200 with the monitor, its state
// paused with paused_until and the reason; the manifest is unchanged and
// export ignores the pause; resuming clears it. A check shows the same.
func TestPauseAndResume(t *testing.T) {
	a := newAPI(t)
	code, created, _ := a.do("POST", "/api/v1/monitors", ping("backup", map[string]any{"expected_interval_seconds": 3600}))
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, created)
	}
	id := created["uuid"].(string)
	until := a.srv.Now.Add(2 * time.Hour).UTC().Format(time.RFC3339)
	code, body, _ := a.do("POST", "/api/v1/monitors/"+id+"/pause", map[string]any{"until": until, "reason": "moving the database"})
	st, _ := body["status"].(map[string]any)
	if code != http.StatusOK || st["state"] != "paused" || st["paused_until"] != until || st["pause_reason"] != "moving the database" || body["enabled"] != true {
		t.Fatalf("pause: %d %v", code, body)
	}
	code, exported, _ := a.do("GET", "/api/v1/monitors/export", nil)
	if code != http.StatusOK || toJSON(exported["monitors"]) != toJSON([]any{map[string]any{"manifest_version": 1, "kind": "ping", "name": "backup", "enabled": true,
		"tags": []any{}, "timeout_seconds": 600, "expected_interval_seconds": 3600}}) {
		t.Fatalf("export: %s", toJSON(exported))
	}
	// Paused until resumed: paused_until is null.
	code, body, _ = a.do("POST", "/api/v1/monitors/"+id+"/pause", "")
	st, _ = body["status"].(map[string]any)
	if v, has := st["paused_until"]; code != http.StatusOK || !has || v != nil || st["pause_reason"] != nil {
		t.Fatalf("pause without a body: %d %v", code, body)
	}
	code, body, _ = a.do("POST", "/api/v1/monitors/"+id+"/resume", nil)
	st, _ = body["status"].(map[string]any)
	if _, has := st["paused_until"]; code != http.StatusOK || st["state"] != "new" || has {
		t.Fatalf("resume: %d %v", code, body)
	}

	code, created, _ = a.do("POST", "/api/v1/monitors", httpCheck("site", "https://example.com/"))
	if code != http.StatusCreated {
		t.Fatalf("create check: %d %v", code, created)
	}
	code, body, _ = a.do("POST", "/api/v1/monitors/"+created["uuid"].(string)+"/pause", map[string]any{})
	if st, _ := body["status"].(map[string]any); code != http.StatusOK || st["state"] != "paused" {
		t.Fatalf("pause a check: %d %v", code, body)
	}
}

// TestPauseRefusals: bad bodies are 422 under "pause" with stable codes;
// an unknown or another account's monitor is 404; a read-only key is 403.
func TestPauseRefusals(t *testing.T) {
	a := newAPI(t)
	_, created, _ := a.do("POST", "/api/v1/monitors", ping("backup", nil))
	path := "/api/v1/monitors/" + created["uuid"].(string) + "/pause"
	now := a.srv.Now
	for _, tc := range []struct {
		body any
		want []string
	}{
		{"[1]", []string{"invalid_json"}},
		{"{", []string{"invalid_json"}},
		{map[string]any{"until": "tomorrow"}, []string{"until_invalid"}},
		{map[string]any{"until": now.Add(-time.Minute).Format(time.RFC3339)}, []string{"until_invalid"}},
		{map[string]any{"until": now.Add(367 * 24 * time.Hour).Format(time.RFC3339)}, []string{"until_invalid"}},
		{map[string]any{"reason": 5}, []string{"reason_invalid"}},
		{map[string]any{"reason": string(make([]rune, 256))}, []string{"reason_invalid"}},
		{map[string]any{"reason": "   "}, []string{"reason_invalid"}},
		{map[string]any{"for": "2h", "until": 7}, []string{"until_invalid", "field_unknown"}},
	} {
		code, body, _ := a.do("POST", path, tc.body)
		if got := codes(body, "pause"); code != http.StatusUnprocessableEntity || !slices.Equal(got, tc.want) {
			t.Errorf("%v: %d %v, want 422 %v", tc.body, code, body, tc.want)
		}
	}
	if code, _, _ := a.do("POST", "/api/v1/monitors/00000000-0000-4000-8000-000000000000/pause", nil); code != http.StatusNotFound {
		t.Errorf("unknown monitor: %d", code)
	}
	if code, _, _ := a.do("POST", "/api/v1/monitors/00000000-0000-4000-8000-000000000000/resume", nil); code != http.StatusNotFound {
		t.Errorf("unknown monitor: %d", code)
	}
}
