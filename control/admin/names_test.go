package admin_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"lookout/control/controltest"
)

// badNames break the rule of every name people see: a control character
// (NUL, ESC, a C1 CSI), a bidirectional override, isolate or mark, or
// nothing visible.
var badNames = []struct{ name, value, why string }{
	{"NUL", "a\x00b", "must not contain control characters"},
	{"ESC", "\x1b[31mred", "must not contain control characters"},
	{"C1 CSI", "a\u009bb", "must not contain control characters"},
	{"RTL override", "ops\u202egpj.exe", "must not contain bidirectional"},
	{"isolate", "\u2066ops\u2069", "must not contain bidirectional"},
	{"RTL mark", "ops\u200f", "must not contain bidirectional"},
	{"zero-width only", "\u200b\u200c\u200d", "must not be blank"},
	{"BOM and word joiner", "\ufeff\u2060", "must not be blank"},
	{"Hangul filler", "\u3164", "must not be blank"},
}

// TestNamesFollowOneRule: key, channel, notification group (and its
// channels'), agent token and plan names are refused 400 invalid_request
// naming the field when they break the rule, and nothing is stored.
func TestNamesFollowOneRule(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	base := "/admin/v1/accounts/" + acct.ID
	slack := `"config":{"webhook_url":"https://hooks.slack.com/services/T/B/X"}`
	for _, bad := range badNames {
		q, _ := json.Marshal(bad.value)
		name := string(q)
		t.Run(bad.name, func(t *testing.T) {
			for _, tc := range []struct{ method, path, body, field string }{
				{"POST", base + "/keys", `{"type":"ingest","name":` + name + `}`, "name"},
				{"POST", base + "/channels", `{"type":"slack","name":` + name + `,` + slack + `}`, "name"},
				{"POST", base + "/notification-groups", `{"name":` + name + `,"channels":[]}`, "name"},
				{"POST", base + "/notification-groups", `{"name":"ops","channels":[{"type":"slack","name":` + name + `,` + slack + `}]}`, "channels[0].name"},
				{"POST", "/admin/v1/agent-tokens", `{"region":"eu","name":` + name + `}`, "name"},
				{"PUT", base + "/plan", `{"name":` + name + `}`, "name"},
				{"POST", "/admin/v1/accounts", `{"email":"x@example.com","plan":{"name":` + name + `}}`, "plan.name"},
			} {
				do(t, srv, tc.method, tc.path, tc.body).wantError(t, http.StatusBadRequest, "invalid_request",
					"invalid field: "+tc.field+": "+bad.why)
			}
		})
	}
	keys, err := srv.Store.Keys(acct.ID)
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %d, %v: a refused name was stored", len(keys), err)
	}
	for _, read := range []func(string) (int, error){
		func(id string) (int, error) { c, err := srv.Store.Channels(id); return len(c), err },
		func(id string) (int, error) { g, err := srv.Store.NotificationGroups(id); return len(g), err },
	} {
		if n, err := read(acct.ID); err != nil || n != 0 {
			t.Fatalf("%d stored, %v: a refused name was stored", n, err)
		}
	}
	a, err := srv.Store.Account(acct.ID)
	if err != nil || a.GetPlan().GetName() != acct.Plan["name"] {
		t.Fatalf("plan %q, %v: a refused name was stored", a.GetPlan().GetName(), err)
	}
	// Names in any script, with emoji sequences, are fine.
	for _, ok := range []string{"équipe de nuit", "فريق", "チーム 👨\u200d👩\u200d👧"} {
		q, _ := json.Marshal(ok)
		do(t, srv, "POST", base+"/keys", `{"type":"ingest","name":`+string(q)+`}`).wantStatus(t, http.StatusCreated)
	}
}
