package manifest

import "strconv"

// Validation codes of the Management API's 422. Codes are stable: they are never
// renamed or repurposed. Codes marked "added" are Lookout's additions to the list.
const (
	CodeManifestVersionUnsupported = "manifest_version_unsupported"
	CodeInvalidJSON                = "invalid_json"
	CodeKindInvalid                = "kind_invalid"
	CodeNameInvalid                = "name_invalid"
	CodeNameCharsetInvalid         = "name_charset_invalid"
	CodeTimeoutOutOfRange          = "timeout_out_of_range"
	CodeIntervalOutOfRange         = "interval_out_of_range"
	CodeGraceOutOfRange            = "grace_out_of_range"
	CodeScheduleInvalid            = "schedule_invalid"
	CodeDomainInvalid              = "domain_invalid"
	CodeURLInvalid                 = "url_invalid"
	CodeMethodInvalid              = "method_invalid"
	CodeCheckTimeoutInvalid        = "check_timeout_invalid"
	CodeHTTPAssertionRequired      = "http_assertion_required"
	CodeNotificationGroupInvalid   = "notification_group_invalid"

	CodeEnabledInvalid         = "enabled_invalid"          // added: enabled not a boolean
	CodeTagsInvalid            = "tags_invalid"             // added: tags shape, count, length, repeats
	CodeDisplayNameInvalid     = "display_name_invalid"     // added: display_name type or length
	CodeProjectInvalid         = "project_invalid"          // added: project type or length
	CodeRegionsInvalid         = "regions_invalid"          // added: regions shape or region names
	CodeConfirmRegionsInvalid  = "confirm_regions_invalid"  // added: confirm_regions not 1..len(regions), or without regions
	CodeExpectedStatusInvalid  = "expected_status_invalid"  // added: config.expected_status not 100..599
	CodeExpectedContentInvalid = "expected_content_invalid" // added: config.expected_content type or length
	CodeDaysInvalid            = "days_invalid"             // added: warning_days/alert_days range or order
	CodeFieldUnknown           = "field_unknown"            // added: a key that the kind does not have
	CodeTimezoneInvalid        = "timezone_invalid"         // added: timezone not an IANA zone name
	CodeScheduleConflict       = "schedule_conflict"        // added: a ping with both schedule and expected_interval_seconds

	CodeFailureThresholdOutOfRange = "failure_threshold_out_of_range" // added: a check's failure_threshold not 1..10
	CodeRemindEveryOutOfRange      = "remind_every_out_of_range"      // added: remind_every_seconds not 300..604800
)

// Codes of the options of checks for real endpoints (http_check options,
// ssl_check port and ca, tcp_check and dns_check).
const (
	CodeHeaderInvalid          = "header_invalid"           // headers shape, a name, a value with a line break, a hop-by-hop header
	CodeBodyTooLarge           = "body_too_large"           // body over 64 KiB
	CodeJSONPathInvalid        = "json_path_invalid"        // json_path shape, a path, an equals that is not a scalar
	CodeCAInvalid              = "ca_invalid"               // ca not PEM certificates
	CodePortInvalid            = "port_invalid"             // port not 1..65535, or given twice
	CodeHostInvalid            = "host_invalid"             // tcp host, dns name or server not a host
	CodeDNSTypeInvalid         = "dns_type_invalid"         // dns type outside A, AAAA, CNAME, MX, TXT
	CodeBodyInvalid            = "body_invalid"             // added: body not a string
	CodeBasicAuthInvalid       = "basic_auth_invalid"       // added: basic_auth shape, user name, password, or with an Authorization header
	CodeFollowRedirectsInvalid = "follow_redirects_invalid" // added: follow_redirects not a boolean
	CodeMaxResponseInvalid     = "max_response_ms_invalid"  // added: max_response_ms not 1..timeout*1000
	CodeTLSSkipVerifyInvalid   = "tls_skip_verify_invalid"  // added: tls_skip_verify not a boolean
	CodeClientCertInvalid      = "client_cert_invalid"      // added: client_cert/client_key not a certificate and its key, or one without the other
	CodeSendInvalid            = "send_invalid"             // added: tcp send type or length
	CodeExpectInvalid          = "expect_invalid"           // added: tcp expect type or length
	CodeDNSExpectedInvalid     = "dns_expected_invalid"     // added: dns expected shape, count, or a value not of the type
	CodeSecretMasked           = "secret_masked"            // added: a masked secret (Mask) where no secret is stored to keep
)

// Codes that the API layer reports about a manifest in the context of the account
// (a taken name, the plan's limit, an immutable field), and the bundle-level codes of
// ParseBundle.
const (
	CodeNameAlreadyExists    = "name_already_exists"
	CodeNameTakenByOtherKind = "name_taken_by_other_kind"
	CodePlanLimitReached     = "plan_limit_reached"
	CodeKindMismatch         = "kind_mismatch"
	CodeNameImmutable        = "name_immutable"
	CodeBundleInvalid        = "bundle_invalid"
	CodeMonitorsMissing      = "monitors_missing"
	CodeEntryNotObject       = "entry_not_object"
	CodeDuplicateEntry       = "duplicate_entry"
)

// Keys of the errors and error_codes objects of a 422 body.
const (
	// KeyManifest is the key of a single manifest's problems.
	KeyManifest = "manifest"
	// KeyBundle is the key of problems with the bundle as a whole (invalid_json,
	// bundle_invalid, monitors_missing, field_unknown).
	KeyBundle = "bundle"
)

// EntryKey returns the key of the problems of the bundle entry at index i: "monitors.<i>".
func EntryKey(i int) string {
	return "monitors." + strconv.Itoa(i)
}

// Error is one validation problem.
type Error struct {
	Field   string // path of the field, such as "config.url"; empty for the whole document
	Code    string // stable code, one of the Code constants
	Message string // English, for people; the wording may change
}

// Errors is the ordered list of the problems of one manifest (or one key of a bundle).
// The order is stable: fields in the order of the field tables, then unknown fields by name.
type Errors []Error

// Has reports whether e contains code.
func (e Errors) Has(code string) bool {
	for _, x := range e {
		if x.Code == code {
			return true
		}
	}
	return false
}

// Codes returns the codes of e in order.
func (e Errors) Codes() []string {
	out := make([]string, len(e))
	for i, x := range e {
		out[i] = x.Code
	}
	return out
}

// Messages returns the messages of e in order.
func (e Errors) Messages() []string {
	out := make([]string, len(e))
	for i, x := range e {
		out[i] = x.Message
	}
	return out
}

// Body returns the 422 body of a single manifest's problems, under KeyManifest. An empty
// message becomes a generic summary.
func (e Errors) Body(message string) ErrorBody {
	var b BundleErrors
	b.Add(KeyManifest, e...)
	if message == "" {
		message = "The manifest is invalid."
	}
	return b.Body(message)
}

// KeyErrors is the list of problems under one key of a 422 body.
type KeyErrors struct {
	Key    string
	Errors Errors
}

// BundleErrors is an ordered map from key (KeyBundle or EntryKey(i)) to problems.
type BundleErrors []KeyErrors

// Add appends errs under key, after those already there. Adding nothing is a no-op.
func (b *BundleErrors) Add(key string, errs ...Error) {
	if len(errs) == 0 {
		return
	}
	for i := range *b {
		if (*b)[i].Key == key {
			(*b)[i].Errors = append((*b)[i].Errors, errs...)
			return
		}
	}
	*b = append(*b, KeyErrors{Key: key, Errors: append(Errors(nil), errs...)})
}

// Get returns the problems under key.
func (b BundleErrors) Get(key string) Errors {
	for _, ke := range b {
		if ke.Key == key {
			return ke.Errors
		}
	}
	return nil
}

// Body returns the 422 body of b. An empty message becomes a generic summary.
func (b BundleErrors) Body(message string) ErrorBody {
	if message == "" {
		message = "The bundle is invalid."
	}
	body := ErrorBody{Message: message, Errors: map[string][]string{}, ErrorCodes: map[string][]string{}}
	for _, ke := range b {
		body.Errors[ke.Key] = append(body.Errors[ke.Key], ke.Errors.Messages()...)
		body.ErrorCodes[ke.Key] = append(body.ErrorCodes[ke.Key], ke.Errors.Codes()...)
	}
	return body
}

// ErrorBody is the 422 validation body of the Management API: errors and
// error_codes have the same keys, and the same positions within each key.
type ErrorBody struct {
	Message    string              `json:"message"`
	Errors     map[string][]string `json:"errors"`
	ErrorCodes map[string][]string `json:"error_codes"`
}
