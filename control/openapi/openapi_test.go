package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/google/uuid"

	"lookout/control/openapi"
)

// TestEndpoints sends every case of the table to the real handlers and
// checks the request and the answer against the document.
func TestEndpoints(t *testing.T) {
	f := newFixture(t)
	v := newValidator(f)
	for _, c := range cases(f) {
		t.Run(c.name, func(t *testing.T) { v.check(t, c) })
	}
	for _, d := range knownHeaderDeviations {
		if !v.seen[d] {
			t.Errorf("known deviation no longer occurs: %s %s is now sent; remove it from knownHeaderDeviations", d.pathPrefix, d.header)
		}
	}
}

// TestEveryOperationIsExercised fails when an operation of the document is
// neither exercised by the table nor listed in notYetServed, and when an
// operation listed in notYetServed is exercised, absent from the document,
// or already served by a handler.
func TestEveryOperationIsExercised(t *testing.T) {
	f := newFixture(t)
	exercised := map[string]bool{}
	for _, c := range cases(f) {
		if c.unrouted != "" {
			continue
		}
		route, _, err := f.router.FindRoute(c.request(t, f.url))
		if err != nil {
			t.Errorf("case %q: %s %s is in no operation of the document: %v", c.name, c.method, c.path, err)
			continue
		}
		exercised[route.Method+" "+route.Path] = true
	}
	documented := map[string]bool{}
	for _, path := range f.doc.Paths.InMatchingOrder() {
		for method := range f.doc.Paths.Value(path).Operations() {
			op := method + " " + path
			documented[op] = true
			switch {
			case exercised[op] && notYetServed[op]:
				t.Errorf("%s is exercised by the table: remove it from notYetServed", op)
			case !exercised[op] && !notYetServed[op]:
				t.Errorf("%s is in the document but no case of the table exercises it: add its cases", op)
			}
		}
	}
	for op := range notYetServed {
		if !documented[op] {
			t.Errorf("notYetServed lists %s, which the document does not have", op)
			continue
		}
		// A handler that serves the operation answers anything but the
		// mux's plain-text 404 or 405 to a request without a key.
		method, path, _ := strings.Cut(op, " ")
		path = strings.ReplaceAll(path, "{uuid}", uuid.NewString())
		a := f.send(method, path, nil, "")
		if (a.status != 404 && a.status != 405) || strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
			t.Errorf("%s is served now (it answered %d %s): add its cases to the table and remove it from notYetServed", op, a.status, a.body)
		}
	}
}

// TestHandler checks what Handler serves: the embedded document, as is.
func TestHandler(t *testing.T) {
	f := newFixture(t)
	a := f.send("GET", "/openapi.json", nil, "")
	if a.status != 200 || a.header.Get("Content-Type") != "application/json" || a.header.Get("Cache-Control") != "public, max-age=300" {
		t.Fatalf("GET /openapi.json: %d %v", a.status, a.header)
	}
	if !bytes.Equal(a.body, openapi.Document()) {
		t.Fatal("GET /openapi.json is not the embedded document")
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(a.body, &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q (%v), want 3.1.0", doc.OpenAPI, err)
	}
}

// validator checks real requests and answers against the document.
type validator struct {
	f *fixture
	// strict checks the request's credentials against the operation's
	// security schemes; lenient, for the cases that expect 401, does not.
	strict, lenient *openapi3filter.Options
	seen            map[headerDeviation]bool
}

func newValidator(f *fixture) *validator {
	formats := []openapi3.SchemaValidationOption{formatValidators()}
	return &validator{
		f: f,
		strict: &openapi3filter.Options{
			IncludeResponseStatus:   true,
			SkipSettingDefaults:     true,
			AuthenticationFunc:      authenticate,
			SchemaValidationOptions: formats,
		},
		lenient: &openapi3filter.Options{
			IncludeResponseStatus:   true,
			SkipSettingDefaults:     true,
			AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
			SchemaValidationOptions: formats,
		},
		seen: map[headerDeviation]bool{},
	}
}

// formatValidators checks the string formats the document uses that
// kin-openapi does not check by itself (it checks date and date-time).
func formatValidators() openapi3.SchemaValidationOption {
	return openapi3.WithStringFormatValidators(map[string]openapi3.StringFormatValidator{
		"uuid": openapi3.NewCallbackValidator(func(s string) error {
			if _, err := uuid.Parse(s); err != nil || len(s) != 36 {
				return fmt.Errorf("not a UUID: %q", s)
			}
			return nil
		}),
		"email": openapi3.NewCallbackValidator(func(s string) error {
			if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
				return fmt.Errorf("not a plain e-mail address: %q", s)
			}
			return nil
		}),
		"uri": openapi3.NewCallbackValidator(func(s string) error {
			if u, err := url.Parse(s); err != nil || !u.IsAbs() {
				return fmt.Errorf("not an absolute URI: %q", s)
			}
			return nil
		}),
	})
}

// authenticate checks that a request carries the credential a security
// scheme of the document describes: a bearer token with the scheme's
// prefix (bearerFormat "ck_...") or the query parameter of an apiKey.
func authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	r := in.RequestValidationInput.Request
	s := in.SecurityScheme
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
			return fmt.Errorf("%s: no bearer token", in.SecuritySchemeName)
		}
		if prefix, _, _ := strings.Cut(s.BearerFormat, "..."); !strings.HasPrefix(token, prefix) {
			return fmt.Errorf("%s: the token is not a %s key", in.SecuritySchemeName, s.BearerFormat)
		}
		return nil
	case s.Type == "apiKey" && s.In == "query":
		if r.URL.Query().Get(s.Name) == "" {
			return fmt.Errorf("%s: no %s query parameter", in.SecuritySchemeName, s.Name)
		}
		return nil
	}
	return fmt.Errorf("%s: the test does not know security schemes of type %s", in.SecuritySchemeName, s.Type)
}

// request builds the case's request as the validator sees it.
func (c endpointCase) request(t *testing.T, base string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range c.headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	if c.body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

func (v *validator) check(t *testing.T, c endpointCase) {
	f := v.f
	ctx := context.Background()
	// A second passes between cases, so that the Management API's rate
	// limit (a bucket of 60 refilled at one per second) never runs out.
	f.clock.advance(time.Second)
	if c.setup != nil {
		defer c.setup(f)()
	}
	a := f.send(c.method, c.path, c.headers, c.body)
	if c.deviation != "" {
		if a.status == c.status && bytes.Contains(a.body, []byte(c.contains)) {
			t.Fatalf("the handler now answers %d as the contract says: take the deviation out of the case (%s)", a.status, c.deviation)
		}
		t.Logf("known deviation: answered %d %s, the contract says %d: %s", a.status, clip(a.body), c.status, c.deviation)
		return
	}
	if a.status != c.status {
		t.Fatalf("%s %s answered %d %s, want %d", c.method, c.path, a.status, clip(a.body), c.status)
	}
	if c.contains != "" && !bytes.Contains(a.body, []byte(c.contains)) {
		t.Fatalf("%s %s answered %d %s, want a body with %s", c.method, c.path, a.status, clip(a.body), c.contains)
	}

	req := c.request(t, f.url)
	route, params, err := f.router.FindRoute(req)
	if c.unrouted != "" {
		if !errors.Is(err, routers.ErrPathNotFound) && !errors.Is(err, routers.ErrMethodNotAllowed) {
			t.Fatalf("%s %s is an operation of the document (%v); the case should not be unrouted", c.method, c.path, err)
		}
		v.checkComponentResponse(t, c.unrouted, a)
		return
	}
	if err != nil {
		t.Fatalf("%s %s: no operation of the document: %v", c.method, c.path, err)
	}

	opts := v.strict
	if c.status == http.StatusUnauthorized {
		opts = v.lenient
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	err = openapi3filter.ValidateRequest(ctx, in)
	switch {
	case c.invalidRequest && err == nil:
		t.Errorf("the handler refuses the request (%d %s) but the document accepts it", a.status, clip(a.body))
	case !c.invalidRequest && err != nil:
		t.Errorf("the document rejects the request: %v", err)
	}

	header := a.header.Clone()
	response := route.Operation.Responses.Status(a.status)
	if response != nil && response.Value != nil {
		for _, d := range knownHeaderDeviations {
			h := response.Value.Headers[d.header]
			if strings.HasPrefix(route.Path, d.pathPrefix) && h != nil && h.Value.Required && header.Get(d.header) == "" {
				v.seen[d] = true
				header.Set(d.header, "1")
				t.Logf("known deviation: %s is missing (%s)", d.header, d.why)
			}
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 a.status,
		Header:                 header,
		Options:                opts,
	}
	if c.method == http.MethodHead {
		// ValidateResponse skips HEAD answers; check the headers as those
		// of a GET, against the HEAD operation's responses (which have no
		// content, so the body is not looked at).
		get := *in
		get.Request = req.Clone(ctx)
		get.Request.Method = http.MethodGet
		out.RequestValidationInput = &get
	}
	out.SetBodyBytes(a.body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("the document rejects the answer %d %s: %v", a.status, clip(a.body), err)
	}
	if response != nil && response.Value != nil && len(response.Value.Content) == 0 && len(a.body) != 0 {
		t.Errorf("the document gives %d no body, but the answer has %s", a.status, clip(a.body))
	}
}

// checkComponentResponse checks an answer against components/responses/name:
// its required headers and its body.
func (v *validator) checkComponentResponse(t *testing.T, name string, a answer) {
	ref := v.f.doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		t.Fatalf("components/responses has no %s", name)
	}
	resp := ref.Value
	names := make([]string, 0, len(resp.Headers))
	for h := range resp.Headers {
		names = append(names, h)
	}
	sort.Strings(names)
	for _, h := range names {
		hv := resp.Headers[h].Value
		got := a.header.Get(h)
		if got == "" {
			if hv.Required {
				t.Errorf("answer lacks the header %s that %s requires", h, name)
			}
			continue
		}
		if hv.Schema != nil && hv.Schema.Value.Type.Is("string") {
			if err := hv.Schema.Value.VisitJSON(got, openapi3.EnableJSONSchema2020(), formatValidators()); err != nil {
				t.Errorf("header %s: %v", h, err)
			}
		}
	}
	ct := a.header.Get("Content-Type")
	mt := resp.Content.Get(ct)
	if mt == nil {
		t.Fatalf("%s has no content of type %q", name, ct)
	}
	var body any
	if err := json.Unmarshal(a.body, &body); err != nil {
		t.Fatalf("answer body %s: %v", clip(a.body), err)
	}
	if err := mt.Schema.Value.VisitJSON(body, openapi3.EnableJSONSchema2020(), formatValidators()); err != nil {
		t.Errorf("the document's %s rejects the answer %s: %v", name, clip(a.body), err)
	}
}

// clip shortens a body for a message.
func clip(b []byte) string {
	const max = 300
	if len(b) <= max {
		return string(b)
	}
	return string(b[:max]) + "..."
}
