package manage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/google/uuid"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
	"lookout/internal/names"
)

// An account's public status page (GET /status/{slug}, control/public),
// set with PUT /api/v1/status-page and read with GET.

// The codes of a refused status page, under the key status_page.
const (
	keyStatusPage    = "status_page"
	codeSlugInvalid  = "slug_invalid"
	codeSlugTaken    = state.CodeSlugTaken
	codeTitleInvalid = "title_invalid"
	codeMatchInvalid = "match_invalid"
)

// Bounds of a status page.
const (
	maxSlug          = 64
	maxTitle         = 100
	maxMatchMonitors = 500
	maxMatchTags     = 100
	maxMatchProjects = 100
)

// StatusPageMatch chooses the monitors a status page shows: a monitor
// matching any entry (its uuid, one of its tags, its project) is on it;
// an empty match is every monitor of the account.
type StatusPageMatch struct {
	Monitors []string `json:"monitors"`
	Tags     []string `json:"tags"`
	Projects []string `json:"projects"`
}

// StatusPageRequest is what PUT /api/v1/status-page sets (the panel's form
// too).
type StatusPageRequest struct {
	Enabled bool            `json:"enabled"`
	Slug    string          `json:"slug"`
	Title   string          `json:"title"`
	Match   StatusPageMatch `json:"match"`
}

// StatusPage is an account's status page as the API shows it: the request
// fields, and where the page is published (path, or url when the request
// tells the origin).
type StatusPage struct {
	StatusPageRequest
	Path string `json:"-"`
	URL  string `json:"url"`
}

// StatusPageOf is a stored page as the API shows it.
func StatusPageOf(p *statev1.StatusPage) *StatusPage {
	m := p.GetMatch()
	out := &StatusPage{StatusPageRequest: StatusPageRequest{Enabled: p.GetEnabled(), Slug: p.GetSlug(), Title: p.GetTitle(),
		Match: StatusPageMatch{Monitors: nonNil(m.GetMonitors()), Tags: nonNil(m.GetTags()), Projects: nonNil(m.GetProjects())}}}
	out.Path = "/status/" + p.GetSlug()
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// validSlug: 1 to 64 of a-z, 0-9 and '-', not starting or ending with
// '-' (a path segment that reads well in a URL).
func validSlug(s string) bool {
	if s == "" || len(s) > maxSlug || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// checkStatusPage returns every problem of req for the account (monitors
// of the match must be its own), and the request in canonical form
// (uuids lower-case, repeats dropped, sorted).
func (a *API) checkStatusPage(accountID string, req StatusPageRequest) (StatusPageRequest, manifest.Errors) {
	var errs manifest.Errors
	add := func(field, code, format string, args ...any) {
		errs = append(errs, manifest.Error{Field: field, Code: code, Message: field + " " + fmt.Sprintf(format, args...)})
	}
	if !validSlug(req.Slug) {
		add("slug", codeSlugInvalid, "must be 1 to %d of a-z, 0-9 and '-', not starting or ending with '-', got %q", maxSlug, req.Slug)
	}
	if n := utf8.RuneCountInString(req.Title); n < 1 || n > maxTitle {
		add("title", codeTitleInvalid, "must be 1 to %d characters long, got %d", maxTitle, n)
	} else if err := names.Check(req.Title); err != nil {
		add("title", codeTitleInvalid, "%v", err)
	}
	m := req.Match
	if len(m.Monitors) > maxMatchMonitors || len(m.Tags) > maxMatchTags || len(m.Projects) > maxMatchProjects {
		add("match", codeMatchInvalid, "may hold at most %d monitors, %d tags and %d projects", maxMatchMonitors, maxMatchTags, maxMatchProjects)
		return req, errs
	}
	var ids []string
	for _, id := range m.Monitors {
		u, err := uuid.Parse(id)
		if err != nil || len(id) != 36 {
			add("match.monitors", codeMatchInvalid, "item %q is not a monitor uuid", id)
			continue
		}
		if _, err := a.state.Monitor(accountID, u.String()); err != nil {
			add("match.monitors", codeMatchInvalid, "item %q is not a monitor of the account", id)
			continue
		}
		ids = append(ids, u.String())
	}
	for _, list := range []struct {
		field string
		items []string
		max   int
	}{{"match.tags", m.Tags, manifest.MaxTagLen}, {"match.projects", m.Projects, manifest.MaxProject}} {
		for i, s := range list.items {
			if n := utf8.RuneCountInString(s); n < 1 || n > list.max {
				add(list.field, codeMatchInvalid, "item %d must be 1 to %d characters long, got %d", i, list.max, n)
			} else if err := names.Check(s); err != nil {
				add(list.field, codeMatchInvalid, "item %d %v", i, err)
			}
		}
	}
	req.Match = StatusPageMatch{Monitors: canonical(ids), Tags: canonical(m.Tags), Projects: canonical(m.Projects)}
	return req, errs
}

// canonical is list sorted without repeats (never nil).
func canonical(list []string) []string {
	out := append([]string{}, list...)
	sort.Strings(out)
	return slices.Compact(out)
}

// ErrSlugTaken is PutStatusPage's error when another account's page has
// the slug.
var ErrSlugTaken = errors.New("the slug is taken by another status page")

// PutStatusPage validates req and sets it as the account's status page
// (the Management API's PUT, and the panel's form). Problems come back as
// errs (the page is not changed); a slug another account holds is an
// error of code slug_taken among them.
func (a *API) PutStatusPage(ctx context.Context, accountID string, req StatusPageRequest) (*StatusPage, manifest.Errors, error) {
	req, errs := a.checkStatusPage(accountID, req)
	if len(errs) > 0 {
		return nil, errs, nil
	}
	cmd := &raftv1.Command{Op: &raftv1.Command_PutStatusPage{PutStatusPage: &raftv1.PutStatusPage{
		AccountId: accountID, Enabled: req.Enabled, Slug: req.Slug, Title: req.Title,
		Match: &raftv1.StatusPageMatch{Monitors: req.Match.Monitors, Tags: req.Match.Tags, Projects: req.Match.Projects},
	}}}
	if err := state.CheckCommand(cmd); err != nil {
		return nil, manifest.Errors{{Field: "match", Code: codeMatchInvalid, Message: err.Error()}}, nil
	}
	res, err := a.cluster.Apply(ctx, cmd)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case res.GetCode() == state.CodeSlugTaken:
		return nil, manifest.Errors{{Field: "slug", Code: codeSlugTaken, Message: "slug " + req.Slug + " is taken by another status page"}}, nil
	case res.GetStatus() != raftv1.Status_STATUS_OK:
		return nil, nil, errors.New("put status page: " + res.GetMessage())
	}
	return &StatusPage{StatusPageRequest: req, Path: "/status/" + req.Slug}, nil, nil
}

// handlePutStatusPage serves PUT /api/v1/status-page.
func (a *API) handlePutStatusPage(w http.ResponseWriter, r *http.Request) {
	acct := keyFrom(r.Context()).GetAccountId()
	if !a.consistent(w, r) {
		return
	}
	raw, ok := a.body(w, r)
	if !ok {
		return
	}
	req, errs := decodeStatusPage(raw)
	if len(errs) == 0 {
		var page *StatusPage
		var err error
		page, errs, err = a.PutStatusPage(r.Context(), acct, req)
		if err != nil {
			if !a.unavailable(w, err) {
				a.internal(w, err)
			}
			return
		}
		if len(errs) == 0 {
			page.URL = a.panelURL(r) + page.Path
			writeJSON(w, http.StatusOK, page)
			return
		}
	}
	var b manifest.BundleErrors
	b.Add(keyStatusPage, errs...)
	writeInvalid(w, b.Body("the status page is invalid"))
}

// handleGetStatusPage serves GET /api/v1/status-page: 404 when the
// account has none.
func (a *API) handleGetStatusPage(w http.ResponseWriter, r *http.Request) {
	if !a.consistent(w, r) {
		return
	}
	p, err := a.state.StatusPage(keyFrom(r.Context()).GetAccountId())
	if isNotFound(err) {
		writeError(w, http.StatusNotFound, "not_found", "the account has no status page")
		return
	}
	if err != nil {
		a.internal(w, err)
		return
	}
	page := StatusPageOf(p)
	page.URL = a.panelURL(r) + page.Path
	writeJSON(w, http.StatusOK, page)
}

// decodeStatusPage reads a PUT body: a JSON object of the request's
// fields; every problem of shape at once (invalid_json, field_unknown, a
// field of the wrong type under its own code). enabled defaults to true.
func decodeStatusPage(raw []byte) (StatusPageRequest, manifest.Errors) {
	req := StatusPageRequest{Enabled: true}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return req, manifest.Errors{{Code: manifest.CodeInvalidJSON, Message: "the body must be a JSON object"}}
	}
	var errs manifest.Errors
	field := func(name, code string, into any) {
		v, ok := fields[name]
		if !ok || string(v) == "null" {
			return
		}
		if err := json.Unmarshal(v, into); err != nil {
			errs = append(errs, manifest.Error{Field: name, Code: code, Message: name + " has the wrong type"})
		}
	}
	field("enabled", manifest.CodeEnabledInvalid, &req.Enabled)
	field("slug", codeSlugInvalid, &req.Slug)
	field("title", codeTitleInvalid, &req.Title)
	if v, ok := fields["match"]; ok && string(v) != "null" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v, &m); err != nil {
			errs = append(errs, manifest.Error{Field: "match", Code: codeMatchInvalid, Message: "match must be an object"})
		}
		for name, into := range map[string]*[]string{"monitors": &req.Match.Monitors, "tags": &req.Match.Tags, "projects": &req.Match.Projects} {
			if v, ok := m[name]; ok && string(v) != "null" {
				if err := json.Unmarshal(v, into); err != nil {
					errs = append(errs, manifest.Error{Field: "match." + name, Code: codeMatchInvalid, Message: "match." + name + " must be a list of strings"})
				}
			}
		}
		for name := range m {
			if name != "monitors" && name != "tags" && name != "projects" {
				errs = append(errs, manifest.Error{Field: "match." + name, Code: manifest.CodeFieldUnknown, Message: "match." + name + " is not a field of a match"})
			}
		}
	}
	for name := range fields {
		switch name {
		case "enabled", "slug", "title", "match", "url":
		default:
			errs = append(errs, manifest.Error{Field: name, Code: manifest.CodeFieldUnknown, Message: name + " is not a field of a status page"})
		}
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return req, errs
}
