package manifest

import (
	"strings"
	"testing"
)

func TestParseCheckCodes(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want []string
	}{
		// schedule
		{"schedule cron", with(baseHTTP(), "schedule", "0 3 * * MON-FRI"), nil},
		{"schedule 30s", with(baseHTTP(), "schedule", "30s"), nil},
		{"schedule 365d", with(baseSSL(), "schedule", "365d"), nil},
		{"schedule 29s", with(baseHTTP(), "schedule", "29s"), []string{CodeScheduleInvalid}},
		{"schedule 366d", with(baseSSL(), "schedule", "366d"), []string{CodeScheduleInvalid}},
		{"schedule 6 fields", with(baseHTTP(), "schedule", "0 * * * * *"), []string{CodeScheduleInvalid}},
		{"schedule missing", with(baseHTTP(), "schedule", absent), []string{CodeScheduleInvalid}},
		{"schedule number", with(baseSSL(), "schedule", 300), []string{CodeScheduleInvalid}},
		// regions
		{"regions ok", with(baseHTTP(), "regions", []string{"eu-west-1", "us"}), nil},
		{"regions empty", with(baseHTTP(), "regions", []string{}), nil},
		{"regions bad name", with(baseHTTP(), "regions", []string{"EU"}), []string{CodeRegionsInvalid}},
		{"regions long name", with(baseHTTP(), "regions", []string{strings.Repeat("a", 65)}), []string{CodeRegionsInvalid}},
		{"regions repeat", with(baseSSL(), "regions", []string{"eu", "eu"}), []string{CodeRegionsInvalid}},
		{"regions string", with(baseSSL(), "regions", "eu"), []string{CodeRegionsInvalid}},
		// confirm_regions
		{"confirm 2 of 2", with(with(baseHTTP(), "regions", []string{"eu", "us"}), "confirm_regions", 2), nil},
		{"confirm 1 of 1", with(with(baseSSL(), "regions", []string{"eu"}), "confirm_regions", 1), nil},
		{"confirm 3 of 2", with(with(baseHTTP(), "regions", []string{"eu", "us"}), "confirm_regions", 3), []string{CodeConfirmRegionsInvalid}},
		{"confirm 0", with(with(baseHTTP(), "regions", []string{"eu"}), "confirm_regions", 0), []string{CodeConfirmRegionsInvalid}},
		{"confirm string", with(with(baseHTTP(), "regions", []string{"eu"}), "confirm_regions", "1"), []string{CodeConfirmRegionsInvalid}},
		{"confirm without regions", with(baseHTTP(), "confirm_regions", 1), []string{CodeConfirmRegionsInvalid}},
		{"confirm with empty regions", with(with(baseHTTP(), "regions", []string{}), "confirm_regions", 1), []string{CodeConfirmRegionsInvalid}},
		{"confirm with bad regions", with(with(baseHTTP(), "regions", []string{"EU"}), "confirm_regions", 1), []string{CodeRegionsInvalid}},
		{"confirm on a ping", with(basePing(), "confirm_regions", 1), []string{CodeFieldUnknown}},
		// config.url
		{"url http", with(baseHTTP(), "config.url", "http://127.0.0.1:8080/x?y=1"), nil},
		{"url relative", with(baseHTTP(), "config.url", "/health"), []string{CodeURLInvalid}},
		{"url ftp", with(baseHTTP(), "config.url", "ftp://example.com/"), []string{CodeURLInvalid}},
		{"url no host", with(baseHTTP(), "config.url", "https:///x"), []string{CodeURLInvalid}},
		{"url space", with(baseHTTP(), "config.url", "https://example.com/a b"), []string{CodeURLInvalid}},
		{"url port", with(baseHTTP(), "config.url", "https://example.com:99999/"), []string{CodeURLInvalid}},
		{"url too long", with(baseHTTP(), "config.url", "https://e.com/"+strings.Repeat("a", 2048)), []string{CodeURLInvalid}},
		{"url missing", with(baseHTTP(), "config.url", absent), []string{CodeURLInvalid}},
		{"url number", with(baseHTTP(), "config.url", 1), []string{CodeURLInvalid}},
		// config.method, config.timeout
		{"method HEAD", with(baseHTTP(), "config.method", "HEAD"), nil},
		{"method options lower", with(baseHTTP(), "config.method", "options"), nil},
		{"method TRACE", with(baseHTTP(), "config.method", "TRACE"), []string{CodeMethodInvalid}},
		{"method number", with(baseHTTP(), "config.method", 1), []string{CodeMethodInvalid}},
		{"timeout 1", with(baseHTTP(), "config.timeout", 1), nil},
		{"timeout 60", with(baseHTTP(), "config.timeout", 60), nil},
		{"timeout 0", with(baseHTTP(), "config.timeout", 0), []string{CodeCheckTimeoutInvalid}},
		{"timeout 61", with(baseHTTP(), "config.timeout", 61), []string{CodeCheckTimeoutInvalid}},
		{"timeout string", with(baseHTTP(), "config.timeout", "5"), []string{CodeCheckTimeoutInvalid}},
		// assertions
		{"status 100", with(baseHTTP(), "config.expected_status", 100), nil},
		{"status 599", with(baseHTTP(), "config.expected_status", 599), nil},
		{"status 99", with(baseHTTP(), "config.expected_status", 99), []string{CodeExpectedStatusInvalid}},
		{"status 600", with(baseHTTP(), "config.expected_status", 600), []string{CodeExpectedStatusInvalid}},
		{"status string", with(baseHTTP(), "config.expected_status", "200"), []string{CodeExpectedStatusInvalid}},
		{"content only", with(with(baseHTTP(), "config.expected_status", absent), "config.expected_content", "OK"), nil},
		{"neither", with(baseHTTP(), "config.expected_status", absent), []string{CodeHTTPAssertionRequired}},
		{"empty content only", with(with(baseHTTP(), "config.expected_status", absent), "config.expected_content", ""), []string{CodeHTTPAssertionRequired}},
		{"content 4096", with(baseHTTP(), "config.expected_content", strings.Repeat("a", 4096)), nil},
		{"content 4097", with(baseHTTP(), "config.expected_content", strings.Repeat("a", 4097)), []string{CodeExpectedContentInvalid}},
		{"content number", with(with(baseHTTP(), "config.expected_status", absent), "config.expected_content", 5), []string{CodeExpectedContentInvalid}},
		{"config missing", with(baseHTTP(), "config", absent), []string{CodeURLInvalid, CodeHTTPAssertionRequired}},
		{"config string", with(baseHTTP(), "config", "x"), []string{CodeURLInvalid, CodeHTTPAssertionRequired}},
		{"ssl config array", with(baseSSL(), "config", []int{}), []string{CodeDomainInvalid}},
		// config.domain
		{"domain port", with(baseSSL(), "config.domain", "mail.example.com:465"), nil},
		{"domain single label", with(baseSSL(), "config.domain", "localhost"), nil},
		{"domain url", with(baseSSL(), "config.domain", "https://example.com"), []string{CodeDomainInvalid}},
		{"domain path", with(baseSSL(), "config.domain", "example.com/x"), []string{CodeDomainInvalid}},
		{"domain bad port", with(baseSSL(), "config.domain", "example.com:0"), []string{CodeDomainInvalid}},
		{"domain empty label", with(baseSSL(), "config.domain", "a..com"), []string{CodeDomainInvalid}},
		{"domain hyphen", with(baseSSL(), "config.domain", "-a.com"), []string{CodeDomainInvalid}},
		{"domain trailing dot", with(baseSSL(), "config.domain", "a.com."), []string{CodeDomainInvalid}},
		{"domain long label", with(baseSSL(), "config.domain", strings.Repeat("a", 64)+".com"), []string{CodeDomainInvalid}},
		{"domain missing", with(baseSSL(), "config.domain", absent), []string{CodeDomainInvalid}},
		{"domain number", with(baseSSL(), "config.domain", 5), []string{CodeDomainInvalid}},
		// days
		{"days 1 1", with(with(baseSSL(), "config.warning_days", 1), "config.alert_days", 1), nil},
		{"days 365 365", with(with(baseSSL(), "config.warning_days", 365), "config.alert_days", 365), nil},
		{"warning 0", with(baseSSL(), "config.warning_days", 0), []string{CodeDaysInvalid}},
		{"warning 366", with(baseSSL(), "config.warning_days", 366), []string{CodeDaysInvalid}},
		{"alert 0", with(baseSSL(), "config.alert_days", 0), []string{CodeDaysInvalid}},
		{"alert string", with(baseSSL(), "config.alert_days", "7"), []string{CodeDaysInvalid}},
		{"alert over warning", with(with(baseSSL(), "config.warning_days", 10), "config.alert_days", 11), []string{CodeDaysInvalid}},
		{"alert over default warning", with(baseSSL(), "config.alert_days", 31), []string{CodeDaysInvalid}},
	}
	for _, tt := range tests {
		if _, got := parse(t, tt.in, Options{}); !sameCodes(got, tt.want) {
			t.Errorf("%s: codes %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseCheckConfigNotObjectMessage(t *testing.T) {
	_, errs := Parse(mustJSON(t, with(baseHTTP(), "config", 3)), Options{})
	if len(errs) == 0 || errs[0].Field != "config.url" || !strings.Contains(errs[0].Message, "config must be an object") {
		t.Errorf("errors %+v", errs)
	}
}
