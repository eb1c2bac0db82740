package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"lookout/control/controltest"
	"lookout/control/state"
	"lookout/internal/apikey"
)

// TestOperatorChangesAreAuditedWithoutSecrets: every change made through
// the operator API is in the account's audit log as the operator's, and
// neither the entries nor their diffs hold a secret (a key, a password, a
// channel's or a group's secret); reads write no entry.
func TestOperatorChangesAreAuditedWithoutSecrets(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	base := "/admin/v1/accounts/" + acct.ID
	do(t, srv, "PUT", base+"/plan", `{"name":"team","monitor_limit":100}`).wantStatus(t, http.StatusOK)
	do(t, srv, "PUT", base+"/password", `{"password":"correct horse battery"}`).wantStatus(t, http.StatusNoContent)
	r := do(t, srv, "POST", base+"/keys", `{"type":"management","name":"deploy","scopes":["read"]}`)
	r.wantStatus(t, http.StatusCreated)
	var key createdKey
	r.decode(t, &key)
	do(t, srv, "DELETE", base+"/keys/"+key.ID, "").wantStatus(t, http.StatusNoContent)
	ch := mustCreateChannel(t, srv, acct.ID, `{"type":"slack","name":"ops chat","config":{"webhook_url":"`+slackURL+`"}}`)
	do(t, srv, "PUT", base+"/channels/"+ch, `{"type":"slack","name":"ops room","config":{"webhook_url":"https://hooks.slack.com/services/T000/B000/YYYYYYYYrotated"}}`).wantStatus(t, http.StatusOK)
	do(t, srv, "DELETE", base+"/channels/"+ch, "").wantStatus(t, http.StatusNoContent)
	r = do(t, srv, "POST", base+"/notification-groups", `{"name":"on-call","channels":[{"type":"pagerduty","config":{"routing_key":"R0UT1NGKEY0123456789abcd"}}]}`)
	r.wantStatus(t, http.StatusCreated)
	var group struct{ ID string }
	r.decode(t, &group)
	do(t, srv, "DELETE", base+"/notification-groups/"+group.ID, "").wantStatus(t, http.StatusNoContent)

	entries, err := srv.Store.AuditLog(acct.ID, nil, state.AuditFilter{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.GetAction())
		if a := e.GetActor(); a.GetType() != "operator" || a.GetName() != "operator" {
			t.Errorf("%s by %v, want the operator", e.GetAction(), a)
		}
	}
	want := "notification_group.delete notification_group.create channel.delete channel.update channel.create key.revoke key.create password.set plan.update account.create"
	if got := strings.Join(actions, " "); got != want {
		t.Fatalf("actions %s\nwant    %s", got, want)
	}
	secrets := []string{key.Key, string(apikey.Hash(key.Key)), acct.IngestKey, acct.ManagementKey, "correct horse", "$2a$",
		"XXXXXXXXsecret", "YYYYYYYYrotated", "R0UT1NGKEY"}
	for _, e := range entries {
		text := e.String()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows the secret %q: %s", e.GetAction(), s, text)
			}
		}
	}
	if d := string(entries[3].GetDiffJson()); !strings.Contains(d, `"name":["ops chat","ops room"]`) || !strings.Contains(d, `"config.webhook_url":["https://hooks.slack.com/****cret","https://hooks.slack.com/****ated"]`) {
		t.Errorf("channel.update diff %s", d)
	}

	for _, path := range []string{base, base + "/keys", base + "/channels", base + "/notification-groups", "/admin/v1/accounts"} {
		do(t, srv, "GET", path, "").wantStatus(t, http.StatusOK)
	}
	if after, _ := srv.Store.AuditLog(acct.ID, nil, state.AuditFilter{}, 100); len(after) != len(entries) {
		t.Fatalf("%d entries after reads, want %d", len(after), len(entries))
	}
}
