package manage_test

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestMaintenanceWindowsCRUD: create one-off and recurring windows (201
// with an id and a status), list, get, replace, delete (no confirm), and
// a monitor in an active window shows maintenance {id, ends_at}.
func TestMaintenanceWindowsCRUD(t *testing.T) {
	a := newAPI(t)
	_, mon, _ := a.do("POST", "/api/v1/monitors", ping("backup", map[string]any{"tags": []string{"db"}}))
	now := a.srv.Now
	ends := now.Add(time.Hour).UTC().Format(time.RFC3339)
	code, w1, _ := a.do("POST", "/api/v1/maintenance-windows", map[string]any{"name": "database move",
		"starts_at": now.Add(-time.Minute).Format(time.RFC3339), "ends_at": ends, "match": map[string]any{"tags": []string{"db"}}})
	st, _ := w1["status"].(map[string]any)
	if code != http.StatusCreated || w1["id"] == "" || st["active"] != true || st["ends_at"] != ends {
		t.Fatalf("create: %d %v", code, w1)
	}
	id := w1["id"].(string)
	code, w2, _ := a.do("POST", "/api/v1/maintenance-windows", map[string]any{"name": "Tuesday patching",
		"schedule": "0 2 * * 2", "duration_seconds": 7200, "timezone": "Europe/Berlin"})
	if code != http.StatusCreated || w2["timezone"] != "Europe/Berlin" || w2["starts_at"] != nil {
		t.Fatalf("create recurring: %d %v", code, w2)
	}
	if code, list, _ := a.do("GET", "/api/v1/maintenance-windows", nil); code != http.StatusOK || len(list["maintenance_windows"].([]any)) != 2 {
		t.Fatalf("list: %d %v", code, list)
	}
	code, got, _ := a.do("GET", "/api/v1/monitors/"+mon["uuid"].(string), nil)
	m, _ := got["status"].(map[string]any)["maintenance"].(map[string]any)
	if code != http.StatusOK || m["id"] != id || m["ends_at"] != ends {
		t.Fatalf("monitor status: %d %v", code, got["status"])
	}
	// Replaced so that it no longer matches: the monitor is no longer in it.
	w1["match"] = map[string]any{"tags": []string{"web"}}
	if code, body, _ := a.do("PUT", "/api/v1/maintenance-windows/"+id, w1); code != http.StatusOK || body["id"] != id {
		t.Fatalf("replace: %d %v", code, body)
	}
	if _, got, _ := a.do("GET", "/api/v1/monitors/"+mon["uuid"].(string), nil); got["status"].(map[string]any)["maintenance"] != nil {
		t.Fatalf("still in maintenance: %v", got["status"])
	}
	if code, _, _ := a.do("DELETE", "/api/v1/maintenance-windows/"+id, nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		if code, _, _ := a.do(m, "/api/v1/maintenance-windows/"+id, w1); code != http.StatusNotFound {
			t.Errorf("%s after delete: %d", m, code)
		}
	}
}

// TestMaintenanceWindowRefusals: the documented bad inputs are 422 under
// "window" with their codes; an unknown tag is allowed.
func TestMaintenanceWindowRefusals(t *testing.T) {
	a := newAPI(t)
	now := a.srv.Now
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	for _, tc := range []struct {
		body any
		want []string
	}{
		{map[string]any{"name": "x", "starts_at": at(2 * time.Hour), "ends_at": at(time.Hour)}, []string{"window_times_invalid"}},
		{map[string]any{"name": "x", "starts_at": at(-2 * time.Hour), "ends_at": at(-time.Hour)}, []string{"window_times_invalid"}},
		{map[string]any{"name": "x", "schedule": "0 2 * * 2"}, []string{"duration_out_of_range"}},
		{map[string]any{"name": "x", "schedule": "every tuesday", "duration_seconds": 60}, []string{"schedule_invalid"}},
		{map[string]any{"name": "x", "schedule": "1d", "duration_seconds": 60, "match": map[string]any{"monitors": []string{"00000000-0000-4000-8000-000000000000"}}}, []string{"match_invalid"}},
		{map[string]any{"schedule": "1d", "duration_seconds": 60}, []string{"name_invalid"}},
		{"[]", []string{"invalid_json"}},
	} {
		code, body, _ := a.do("POST", "/api/v1/maintenance-windows", tc.body)
		if got := codes(body, "window"); code != http.StatusUnprocessableEntity || !slices.Equal(got, tc.want) {
			t.Errorf("%v: %d %v, want %v", tc.body, code, body, tc.want)
		}
	}
	if code, body, _ := a.do("POST", "/api/v1/maintenance-windows", map[string]any{"name": "x", "schedule": "1d", "duration_seconds": 60,
		"match": map[string]any{"tags": []string{"no-monitor-has-this"}}}); code != http.StatusCreated {
		t.Errorf("an unknown tag: %d %v", code, body)
	}
	if code, _, _ := a.do("GET", "/api/v1/maintenance-windows/nope", nil); code != http.StatusNotFound {
		t.Errorf("unknown id: %d", code)
	}
}
