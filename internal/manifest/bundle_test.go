package manifest

import (
	"encoding/json"
	"reflect"
	"testing"
)

func bundleCodes(t *testing.T, raw string) (Bundle, map[string][]string) {
	t.Helper()
	b, errs := ParseBundle([]byte(raw), Options{})
	out := map[string][]string{}
	for _, ke := range errs {
		out[ke.Key] = ke.Errors.Codes()
	}
	return b, out
}

func TestParseBundleCodes(t *testing.T) {
	ping := `{"kind":"ping","name":"a","timeout_seconds":5}`
	tests := []struct {
		name, raw string
		want      map[string][]string
	}{
		{"ok", `{"manifest_version":1,"monitors":[` + ping + `]}`, map[string][]string{}},
		{"empty", `{"manifest_version":1,"monitors":[]}`, map[string][]string{}},
		{"not json", `{"manifest_version":1,`, map[string][]string{"bundle": {CodeInvalidJSON}}},
		{"array", `[]`, map[string][]string{"bundle": {CodeBundleInvalid}}},
		{"null", `null`, map[string][]string{"bundle": {CodeBundleInvalid}}},
		{"version 2", `{"manifest_version":2,"monitors":[]}`, map[string][]string{"bundle": {CodeBundleInvalid}}},
		{"version missing", `{"monitors":[]}`, map[string][]string{"bundle": {CodeBundleInvalid}}},
		{"monitors missing", `{"manifest_version":1}`, map[string][]string{"bundle": {CodeMonitorsMissing}}},
		{"monitors object", `{"manifest_version":1,"monitors":{}}`, map[string][]string{"bundle": {CodeMonitorsMissing}}},
		{"unknown key", `{"manifest_version":1,"monitors":[],"monitor":[]}`, map[string][]string{"bundle": {CodeFieldUnknown}}},
		{"entry not object", `{"manifest_version":1,"monitors":[` + ping + `,5,"x"]}`,
			map[string][]string{"monitors.1": {CodeEntryNotObject}, "monitors.2": {CodeEntryNotObject}}},
		{"entry version 2", `{"manifest_version":1,"monitors":[{"manifest_version":2,"kind":"ping","name":"a","timeout_seconds":5}]}`,
			map[string][]string{"monitors.0": {CodeManifestVersionUnsupported}}},
		{"duplicate", `{"manifest_version":1,"monitors":[` + ping + `,` + ping + `,` + ping + `]}`,
			map[string][]string{"monitors.1": {CodeDuplicateEntry}, "monitors.2": {CodeDuplicateEntry}}},
		{"ping and check share a name", `{"manifest_version":1,"monitors":[` + ping +
			`,{"kind":"http_check","name":"a","schedule":"5m","config":{"url":"http://a/","expected_status":200}}]}`, map[string][]string{}},
		{"http and ssl clash", `{"manifest_version":1,"monitors":[{"kind":"http_check","name":"a","schedule":"5m","config":{"url":"http://a/","expected_status":200}},` +
			`{"kind":"ssl_check","name":"a","schedule":"1d","config":{"domain":"a.com"}}]}`,
			map[string][]string{"monitors.1": {CodeNameTakenByOtherKind}}},
		{"entry errors and duplicate", `{"manifest_version":1,"monitors":[` + ping + `,{"kind":"ping","name":"a","timeout_seconds":0}]}`,
			map[string][]string{"monitors.1": {CodeTimeoutOutOfRange, CodeDuplicateEntry}}},
		{"everything", `{"manifest_version":"1","monitors":[{"kind":"x"},[]]}`, map[string][]string{
			"bundle": {CodeBundleInvalid}, "monitors.0": {CodeKindInvalid, CodeNameInvalid}, "monitors.1": {CodeEntryNotObject}}},
	}
	for _, tt := range tests {
		if _, got := bundleCodes(t, tt.raw); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseBundleResult(t *testing.T) {
	b, errs := ParseBundle([]byte(`{"manifest_version":1,"monitors":[{"kind":"ping","name":"a","timeout_seconds":5,"uuid":"x"}]}`), Options{})
	if len(errs) != 0 || len(b.Monitors) != 1 || b.Monitors[0].UUID != "" || b.Monitors[0].ManifestVersion != 1 || !b.Monitors[0].Enabled {
		t.Errorf("%+v %v", b, errs)
	}
}

func TestErrorBody(t *testing.T) {
	_, errs := ParseBundle([]byte(`{"manifest_version":1,"monitors":[{"kind":"ping","name":"a b","timeout_seconds":"1"},7]}`), Options{})
	body := errs.Body("")
	js, _ := json.Marshal(body)
	var got struct {
		Message    string              `json:"message"`
		Errors     map[string][]string `json:"errors"`
		ErrorCodes map[string][]string `json:"error_codes"`
	}
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	wantCodes := map[string][]string{"monitors.0": {CodeNameCharsetInvalid, CodeTimeoutOutOfRange}, "monitors.1": {CodeEntryNotObject}}
	if got.Message == "" || !reflect.DeepEqual(got.ErrorCodes, wantCodes) || len(got.Errors["monitors.0"]) != 2 || len(got.Errors["monitors.1"]) != 1 {
		t.Errorf("body %s", js)
	}
	single := Errors{{Code: CodeNameAlreadyExists, Message: "name taken"}}.Body("Conflict.")
	if single.Message != "Conflict." || !reflect.DeepEqual(single.ErrorCodes, map[string][]string{"manifest": {CodeNameAlreadyExists}}) ||
		!reflect.DeepEqual(single.Errors, map[string][]string{"manifest": {"name taken"}}) {
		t.Errorf("single body %+v", single)
	}
	var be BundleErrors
	be.Add("monitors.3", Error{Code: CodePlanLimitReached, Message: "m"})
	be.Add("monitors.3")
	be.Add("monitors.3", Error{Code: CodeNameAlreadyExists, Message: "n"})
	if !reflect.DeepEqual(be.Get("monitors.3").Codes(), []string{CodePlanLimitReached, CodeNameAlreadyExists}) || len(be) != 1 {
		t.Errorf("Add: %+v", be)
	}
}

func TestNewBundle(t *testing.T) {
	ms := []Manifest{
		{UUID: "3", Kind: KindSSL, Name: "s", Schedule: "1d", Config: Config{Domain: "a.com"}},
		{UUID: "2", Kind: KindHTTP, Name: "h", Schedule: "5m", Config: Config{URL: "http://a/", ExpectedStatus: ptr(200)}},
		{UUID: "1", Kind: KindPing, Name: "b", TimeoutSeconds: 5},
		{UUID: "0", Kind: KindPing, Name: "a", TimeoutSeconds: 5},
	}
	b := NewBundle(ms)
	var names []string
	for _, m := range b.Monitors {
		if m.UUID != "" {
			t.Errorf("uuid kept: %+v", m)
		}
		names = append(names, m.Kind+"/"+m.Name)
	}
	if !reflect.DeepEqual(names, []string{"ping/a", "ping/b", "http_check/h", "ssl_check/s"}) {
		t.Errorf("order %v", names)
	}
	// An export parses back to the same bundle.
	js, _ := json.Marshal(b)
	back, errs := ParseBundle(js, Options{})
	if len(errs) != 0 || !reflect.DeepEqual(back, b) {
		t.Errorf("round trip: %v\n%+v\n%+v", errs, back, b)
	}
}
