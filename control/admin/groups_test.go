package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"lookout/control/controltest"
)

func TestCreateGroup(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	path := "/admin/v1/accounts/" + acct.ID + "/notification-groups"
	tests := []struct{ name, body, channels string }{
		{"channels", `{"name":"on-call","channels":[
			{"type":"slack","name":"#ops","config":{"webhook_url":"https://hooks.example.com/x"}},
			{"type":"email","config":null},
			{"type":"webhook"}]}`,
			`[{"type":"slack","name":"#ops","config":{"webhook_url":"https://hooks.example.com/x"}},{"type":"email","config":null},{"type":"webhook"}]`},
		{"empty", `{"name":"quiet","channels":[]}`, `[]`},
		{"absent", `{"name":"later"}`, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, "POST", path, tt.body)
			r.wantStatus(t, http.StatusCreated)
			var got struct{ ID, Name string }
			r.decode(t, &got)
			if !strings.Contains(string(r.body), `"channels":`+tt.channels) {
				t.Errorf("body %s, want channels %s", r.body, tt.channels)
			}
			g, err := srv.Store.NotificationGroupByName(acct.ID, got.Name)
			if err != nil {
				t.Fatal(err)
			}
			if g.GetId() != got.ID || string(g.GetChannelsJson()) != tt.channels {
				t.Errorf("stored %v", g)
			}
		})
	}
	do(t, srv, "POST", path, `{"name":"on-call","channels":[]}`).
		wantError(t, http.StatusConflict, "conflict", "a notification group named")
	// The same name on another account is fine.
	other := mustCreateAccount(t, srv, "other@example.com")
	do(t, srv, "POST", "/admin/v1/accounts/"+other.ID+"/notification-groups", `{"name":"on-call","channels":[]}`).
		wantStatus(t, http.StatusCreated)
}

func TestCreateGroupInvalid(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	path := "/admin/v1/accounts/" + acct.ID + "/notification-groups"
	tests := []struct{ name, body, msg string }{
		{"no name", `{"channels":[]}`, "invalid field: name"},
		{"long name", `{"name":"` + strings.Repeat("g", 101) + `","channels":[]}`, "invalid field: name"},
		{"channels object", `{"name":"g","channels":{}}`, "invalid field: channels"},
		{"channels string", `{"name":"g","channels":"slack"}`, "invalid field: channels"},
		{"channel not object", `{"name":"g","channels":["slack"]}`, "invalid field: channels[0]"},
		{"no type", `{"name":"g","channels":[{"name":"x"}]}`, "invalid field: channels[0].type"},
		{"bad type", `{"name":"g","channels":[{"type":"email"},{"type":"sms"}]}`, "invalid field: channels[1].type"},
		{"name not string", `{"name":"g","channels":[{"type":"email","name":3}]}`, "invalid field: channels[0].name"},
		{"config not object", `{"name":"g","channels":[{"type":"email","config":"a@b.c"}]}`, "invalid field: channels[0].config"},
		{"unknown channel field", `{"name":"g","channels":[{"type":"email","to":"a@b.c"}]}`, "invalid field: channels[0].to"},
		{"unknown field", `{"name":"g","channels":[],"members":[]}`, "invalid field: members"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			do(t, srv, "POST", path, tt.body).wantError(t, http.StatusBadRequest, "invalid_request", tt.msg)
		})
	}
}

func TestCreateGroupUnknownAccount(t *testing.T) {
	srv := controltest.NewServer(t)
	do(t, srv, "POST", "/admin/v1/accounts/nope/notification-groups", `{"name":"g","channels":[]}`).
		wantError(t, http.StatusNotFound, "not_found", "account nope not found")
}
