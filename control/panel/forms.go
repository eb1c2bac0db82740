package panel

import (
	"slices"

	"lookout/internal/manifest"
)

// The monitor form: one table of fields (monitorFields), each a path of
// the manifest, shown for the kinds that have it. A submitted form becomes
// a manifest's JSON (manifestJSON) that the Management API's own code
// validates and writes, so the panel never judges a value itself: a wrong
// one comes back with the API's code, under the field's path, and is shown
// next to that field. The one exception is text the panel cannot turn into
// JSON at all (a header line without a colon, an assertion whose value is
// not JSON): that is refused by the panel, with the code the API gives the
// field. A field added to the manifest is one more entry in the table.

// fieldType is how a field is typed in and turned into JSON.
type fieldType string

const (
	// textField is a string; empty leaves the key out.
	textField fieldType = "text"
	// areaField is a string typed in a text area, kept as typed.
	areaField fieldType = "area"
	// pemField is PEM typed in a text area: a browser's line breaks
	// (CR LF) become LF, and only white space leaves the key out.
	pemField fieldType = "pem"
	// numberField is an integer; empty leaves the key out, anything but
	// an integer is sent as the string it is, for the API to refuse with
	// the field's code.
	numberField fieldType = "number"
	// statusField is expected_status: a status (200), a class (2xx) or
	// several separated by commas, sent as an integer, a string or a list
	// of both.
	statusField fieldType = "status"
	// listField is an array of strings, typed separated by commas.
	listField fieldType = "list"
	// linesField is an array of strings in a text area, one a line or
	// separated by commas (not for TXT records, whose texts may hold
	// commas).
	linesField fieldType = "lines"
	// headersField is an object of header names to values, typed one
	// "Name: value" a line.
	headersField fieldType = "headers"
	// jsonPathField is a list of {path, equals}, typed one "path = value"
	// a line, the value JSON.
	jsonPathField fieldType = "jsonpath"
	// basicAuthField is {username, password}, typed in two inputs named
	// KEY.username and KEY.password.
	basicAuthField fieldType = "basicauth"
	// checkField is a boolean checkbox.
	checkField fieldType = "check"
	// selectField is a choice of Choices; groupField a choice of the
	// account's notification groups.
	selectField fieldType = "select"
	groupField  fieldType = "group"
)

// Kinds of monitor, as the manifest names them.
var (
	allKinds   = []string{manifest.KindPing, manifest.KindHTTP, manifest.KindSSL, manifest.KindTCP, manifest.KindDNS}
	pingKind   = []string{manifest.KindPing}
	checkKinds = manifest.CheckKinds
	httpKind   = []string{manifest.KindHTTP}
	sslKind    = []string{manifest.KindSSL}
	tcpKind    = []string{manifest.KindTCP}
	dnsKind    = []string{manifest.KindDNS}
	tlsKinds   = []string{manifest.KindHTTP, manifest.KindSSL}
)

// formField is one field of the monitor form.
type formField struct {
	// Key is the manifest's path of the field ("name", "config.url"), the
	// name of its input, and the Field of the API's errors about it (or,
	// for an object, about its keys: config.basic_auth.username).
	Key   string
	Label string
	Type  fieldType
	Kinds []string
	// Group is the part of the form the field is in (a fieldset).
	Group string
	// Required fields are marked; the API decides, not the browser.
	Required bool
	// EmptyIsValue sends "" for an empty input instead of leaving the key
	// out (project: "" takes the monitor out of its project, an absent
	// key would leave it where it is).
	EmptyIsValue bool
	// Immutable fields are shown read-only when editing.
	Immutable bool
	// Choices are a selectField's options; Default is what a select or a
	// checkbox shows when the manifest leaves the key out.
	Choices []string
	Default string
	// Rows is a text area's height in lines (3 when 0).
	Rows        int
	Placeholder string
	Help        string
	// Warning is shown beside the help, as a warning.
	Warning string
	// CopyNote is shown in a copy of a monitor whose field held a secret:
	// a copy does not take secrets (see copyWithoutSecrets).
	CopyNote string
}

// Form groups, in the order they are shown.
const (
	groupWhat    = "What to monitor"
	groupRequest = "The request"
	groupAnswer  = "What the answer must be"
	groupTLS     = "TLS"
	groupWhen    = "When"
	groupWhere   = "Where it runs"
	groupAlerts  = "Alerts and labels"
)

var formGroups = []string{groupWhat, groupRequest, groupAnswer, groupTLS, groupWhen, groupWhere, groupAlerts}

// httpMethods are the methods an http_check may use.
var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// copyNote is the note of a field whose secret a copy leaves out (%s:
// the field's CopyNote).
const copyNote = "A copy does not take the secrets of the monitor it copies: enter %s again."

// monitorFields is the form, in the order of the page.
var monitorFields = []formField{
	{Key: "name", Label: "Name", Type: textField, Kinds: pingKind, Group: groupWhat, Required: true, Immutable: true, Placeholder: "e.g. nightly-backup",
		Help: "The name jobs ping: letters, digits, - and _, at most 64. It cannot change later."},
	{Key: "name", Label: "Name", Type: textField, Kinds: checkKinds, Group: groupWhat, Required: true, Placeholder: "e.g. Shop front page",
		Help: "A label, at most 255 characters."},
	{Key: "display_name", Label: "Display name", Type: textField, Kinds: pingKind, Group: groupWhat, Placeholder: "e.g. Nightly backup",
		Help: "Shown instead of the name, at most 255 characters."},
	{Key: "config.url", Label: "URL", Type: textField, Kinds: httpKind, Group: groupWhat, Required: true, Placeholder: "e.g. https://example.com/health",
		Help: "An absolute http or https address."},
	{Key: "config.method", Label: "Method", Type: selectField, Kinds: httpKind, Group: groupWhat, Choices: httpMethods, Default: manifest.DefaultMethod},
	{Key: "config.timeout", Label: "Request timeout (seconds)", Type: numberField, Kinds: httpKind, Group: groupWhat, Placeholder: "10",
		Help: "1 to 60; 10 when empty."},
	{Key: "config.domain", Label: "Domain", Type: textField, Kinds: sslKind, Group: groupWhat, Required: true, Placeholder: "e.g. example.com",
		Help: "A host name, optionally with :port (443 when none)."},
	{Key: "config.port", Label: "Port", Type: numberField, Kinds: sslKind, Group: groupWhat, Placeholder: "443",
		Help: "1 to 65535, instead of a port in the domain; 443 when neither."},
	{Key: "config.warning_days", Label: "Warn when fewer days left than", Type: numberField, Kinds: sslKind, Group: groupWhat, Placeholder: "30",
		Help: "1 to 365; 30 when empty."},
	{Key: "config.alert_days", Label: "Alert when fewer days left than", Type: numberField, Kinds: sslKind, Group: groupWhat, Placeholder: "7",
		Help: "1 to 365, at most the warning days; 7 when empty."},
	{Key: "config.host", Label: "Host", Type: textField, Kinds: tcpKind, Group: groupWhat, Required: true, Placeholder: "e.g. redis.example.com",
		Help: "A host name or an IP address."},
	{Key: "config.port", Label: "Port", Type: numberField, Kinds: tcpKind, Group: groupWhat, Required: true, Placeholder: "e.g. 6379",
		Help: "1 to 65535."},
	{Key: "config.name", Label: "Name to look up", Type: textField, Kinds: dnsKind, Group: groupWhat, Required: true, Placeholder: "e.g. www.example.com",
		Help: "A DNS name; underscores are allowed (_dmarc.example.com)."},
	{Key: "config.type", Label: "Record type", Type: selectField, Kinds: dnsKind, Group: groupWhat, Choices: manifest.DNSTypes, Default: manifest.DefaultDNSType},
	{Key: "config.server", Label: "DNS server", Type: textField, Kinds: dnsKind, Group: groupWhat, Placeholder: "e.g. 1.1.1.1",
		Help: "A host name or an IP address, optionally with :port (53 when none). Empty: the node's own resolver."},
	{Key: "config.timeout", Label: "Timeout (seconds)", Type: numberField, Kinds: []string{manifest.KindTCP, manifest.KindDNS}, Group: groupWhat, Placeholder: "10",
		Help: "1 to 60; 10 when empty."},

	{Key: "config.headers", Label: "Headers", Type: headersField, Kinds: httpKind, Group: groupRequest, Rows: 3, Placeholder: "e.g. Authorization: Bearer eyJ…",
		Help:     "One a line, Name: value. At most 32. The values of secret headers (Authorization, Cookie, and names with auth, token, key, secret, password and the like) are shown as ******** once saved; left as they are, the stored values are kept.",
		CopyNote: "the value of each secret header"},
	{Key: "config.body", Label: "Body", Type: areaField, Kinds: httpKind, Group: groupRequest,
		Help: "Sent with the method, at most 64 KiB. Give its Content-Type in the headers."},
	{Key: "config.basic_auth", Label: "Basic authentication", Type: basicAuthField, Kinds: httpKind, Group: groupRequest,
		Help:     "A user name (without a colon) and a password; not with an Authorization header. The password is shown as ******** once saved; left as it is, the stored one is kept.",
		CopyNote: "the password"},
	{Key: "config.follow_redirects", Label: "Follow redirects", Type: checkField, Kinds: httpKind, Group: groupRequest, Default: "true",
		Help: "Up to 10. A redirect to another host gets no secret header and no basic authentication. Unticked: the first answer is the one checked."},
	{Key: "config.send", Label: "Send", Type: areaField, Kinds: tcpKind, Group: groupRequest, Rows: 2, Placeholder: "e.g. PING",
		Help: "Written once connected, at most 4096 characters. A line break typed here is sent as CR LF. Empty: nothing is sent."},

	{Key: "config.expected_status", Label: "Expected status", Type: statusField, Kinds: httpKind, Group: groupAnswer, Placeholder: "e.g. 200, 2xx or 200, 301",
		Help: "A status (100 to 599), a class (2xx) or up to 16 of both separated by commas; empty: any 2xx or 3xx. Give this, a content, or a JSON assertion."},
	{Key: "config.expected_content", Label: "Expected content", Type: areaField, Kinds: httpKind, Group: groupAnswer,
		Help: "Text the response body must contain, at most 4096 characters."},
	{Key: "config.content_absent", Label: "Content that must be absent", Type: areaField, Kinds: httpKind, Group: groupAnswer, Rows: 2,
		Help: "Text the response body must not contain, at most 4096 characters."},
	{Key: "config.json_path", Label: "JSON assertions", Type: jsonPathField, Kinds: httpKind, Group: groupAnswer, Rows: 3, Placeholder: `e.g. $.status = "ok"`,
		Help: `One a line, path = value: the value at the path of the JSON body equals the value, written as JSON ($.status = "ok", $.checks[0].count = 3, $.ready = true). At most 16.`},
	{Key: "config.max_response_ms", Label: "Slowest answer (ms)", Type: numberField, Kinds: httpKind, Group: groupAnswer, Placeholder: "e.g. 1000",
		Help: "A slower answer fails: 1 to the timeout in milliseconds. Empty: only the timeout."},
	{Key: "config.expect", Label: "Expect", Type: areaField, Kinds: tcpKind, Group: groupAnswer, Rows: 2, Placeholder: "e.g. +PONG",
		Help: "Text the answer must contain within its first 64 KiB, at most 4096 characters. Empty: a connection is a success."},
	{Key: "config.expected", Label: "Expected answers", Type: linesField, Kinds: dnsKind, Group: groupAnswer, Rows: 2, Placeholder: "e.g. 93.184.215.14",
		Help: "Values that must be among the answers, one a line or separated by commas (TXT: one a line), at most 16: an IPv4 address for A, an IPv6 address for AAAA, a name for CNAME, mail.example.com or 10 mail.example.com for MX. Empty: any answer."},

	{Key: "config.ca", Label: "Trusted CA (PEM)", Type: pemField, Kinds: tlsKinds, Group: groupTLS, Rows: 3, Placeholder: "-----BEGIN CERTIFICATE-----",
		Help: "Certificates of a private CA to trust for this check, besides the system's."},
	{Key: "config.tls_skip_verify", Label: "Do not verify the certificate", Type: checkField, Kinds: httpKind, Group: groupTLS,
		Warning: "Ticked, the check does not verify the certificate of its https URL: an expired, self-signed or impostor certificate passes. Trust a private CA with the field above instead."},
	{Key: "config.client_cert", Label: "Client certificate (PEM)", Type: pemField, Kinds: httpKind, Group: groupTLS, Rows: 3, Placeholder: "-----BEGIN CERTIFICATE-----",
		Help: "Presented to a server that asks for one (mutual TLS), with its key below."},
	{Key: "config.client_key", Label: "Client key (PEM)", Type: pemField, Kinds: httpKind, Group: groupTLS, Rows: 3, Placeholder: "-----BEGIN PRIVATE KEY-----",
		Help:     "The client certificate's private key, shown as ******** once saved; left as it is, the stored one is kept.",
		CopyNote: "the key"},

	{Key: "timeout_seconds", Label: "Timeout (seconds)", Type: numberField, Kinds: pingKind, Group: groupWhen, Required: true,
		Help: "The longest a run may take: a run with no complete or fail within it alerts, and so does a longer one. 1 to 604800."},
	{Key: "expected_interval_seconds", Label: "Expected every (seconds)", Type: numberField, Kinds: pingKind, Group: groupWhen, Placeholder: "e.g. 86400",
		Help: "How often the job runs: no ping for this long, plus the grace, alerts as missed. 60 to 31536000; empty: never missed."},
	{Key: "grace_seconds", Label: "Grace (seconds)", Type: numberField, Kinds: pingKind, Group: groupWhen, Placeholder: "0",
		Help: "How late a ping may be before it is missed. 0 to 604800."},
	{Key: "schedule", Label: "Schedule", Type: textField, Kinds: pingKind, Group: groupWhen, Placeholder: "e.g. 30 2 * * *",
		Help: "Instead of an interval: when the job runs, a 5-field cron expression (30 2 * * *, @daily) or an interval (1h), in the time zone below. A ping is expected at the schedule's first time after the last one."},
	{Key: "schedule", Label: "Schedule", Type: textField, Kinds: checkKinds, Group: groupWhen, Required: true, Placeholder: "e.g. 5m",
		Help: "An interval from 30s to 365d (30s, 5m, 1h, 1d) or a 5-field cron expression (0 * * * *) in the time zone below."},
	{Key: "timezone", Label: "Time zone", Type: textField, Kinds: allKinds, Group: groupWhen, Placeholder: "UTC",
		Help: "An IANA zone such as Europe/Berlin, which cron times are read in; UTC when empty."},
	{Key: "regions", Label: "Regions", Type: listField, Kinds: checkKinds, Group: groupWhere, Placeholder: "e.g. eu-1, us-east",
		Help: "Agent regions that run the check, separated by commas. Empty: the control plane runs it."},
	{Key: "confirm_regions", Label: "Regions that must agree it is down", Type: numberField, Kinds: checkKinds, Group: groupWhere, Placeholder: "1",
		Help: "With regions: how many must see it fail in the same run; 1 when empty."},
	{Key: "project", Label: "Project", Type: textField, Kinds: pingKind, Group: groupAlerts, EmptyIsValue: true,
		Help: "Groups the monitor under a project, made when new. At most 100 characters."},
	{Key: "tags", Label: "Tags", Type: listField, Kinds: allKinds, Group: groupAlerts, Placeholder: "e.g. nightly, db",
		Help: "Labels, separated by commas."},
	{Key: "notification_group", Label: "Alerts go to", Type: groupField, Kinds: allKinds, Group: groupAlerts},
	{Key: "enabled", Label: "Enabled", Type: checkField, Kinds: allKinds, Group: groupAlerts, Default: "true",
		Help: "A disabled monitor raises no alerts; a disabled check does not run."},
}

// fieldsOf are the fields of kind, in form order.
func fieldsOf(kind string) []formField {
	var out []formField
	for _, f := range monitorFields {
		if slices.Contains(f.Kinds, kind) {
			out = append(out, f)
		}
	}
	return out
}

// inputs are the names of the field's inputs: its key, or for basic
// authentication the object's two keys.
func (f formField) inputs() []string {
	if f.Type == basicAuthField {
		return []string{f.Key + ".username", f.Key + ".password"}
	}
	return []string{f.Key}
}

// newValues are the inputs of a new monitor's form: the checkboxes that
// are ticked unless unticked.
func newValues(kind string) formValues {
	v := formValues{}
	for _, f := range fieldsOf(kind) {
		if f.Type == checkField && f.Default != "" {
			v[f.Key] = f.Default
		}
	}
	return v
}
