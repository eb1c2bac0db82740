package openapi_test

import "encoding/json"

// mustWindow creates a maintenance window of main and returns its id.
func (f *fixture) mustWindow(body string) string {
	f.t.Helper()
	a := f.send("POST", "/api/v1/maintenance-windows", bearer(f.main.ManagementKey), body)
	var w struct {
		ID string `json:"id"`
	}
	if a.status != 201 || json.Unmarshal(a.body, &w) != nil {
		f.t.Fatalf("create window: %d %s", a.status, a.body)
	}
	return w.ID
}
