package panel

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"lookout/control/manage"
	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
)

// What the account publishes, on its account page: the badge key (shown,
// regenerated) and the status page's settings.

// Publishing is the Management API's calls for what an account publishes
// (manage.API), so the panel's forms are checked by the API's own code.
type Publishing interface {
	BadgeKey(ctx context.Context, accountID string) (string, error)
	RegenerateBadgeKey(ctx context.Context, accountID string) (string, error)
	PutStatusPage(ctx context.Context, accountID string, req manage.StatusPageRequest) (*manage.StatusPage, manifest.Errors, error)
}

// publishView is the account page's part about badges and the status page.
type publishView struct {
	// Origin is the scheme and host the page was asked at, for the URLs
	// shown.
	Origin   string
	BadgeKey string
	// Example is a badge path of one of the account's monitors ("" when it
	// has none).
	Example, ExampleName string
	BadgeError           string
	// Page is the status page form: as stored, or as typed when refused.
	Page     pageForm
	HasPage  bool
	PagePath string
	// PageErrors are the refusal's messages by field (slug, title, match,
	// enabled).
	PageErrors map[string][]string
	// Matched are the display names of the monitors the stored page shows
	// (the first maxMatchedShown), and how many in all.
	Matched      []string
	MatchedCount int
}

type pageForm struct {
	Enabled                          bool
	Slug, Title, Tags, Projects, IDs string
}

// maxMatchedShown is how many matched monitors the account page names.
const maxMatchedShown = 12

// loadPublish fills v for the account; form, when set, is what was typed.
func (p *Panel) loadPublish(r *http.Request, accountID string, v *publishView, form *pageForm) error {
	if p.o.Publishing == nil {
		return nil
	}
	v.Origin = origin(r)
	key, err := p.o.Publishing.BadgeKey(r.Context(), accountID)
	if err != nil {
		p.log.Warn("reading the badge key failed", "account", accountID, "error", err)
		v.BadgeError = "The badge key cannot be made right now (the cluster has no leader); reload in a moment."
	}
	v.BadgeKey = key
	monitors, err := p.o.State.Monitors(accountID)
	if err != nil {
		return err
	}
	if len(monitors) > 0 && key != "" {
		m := monitors[0]
		v.Example, v.ExampleName = "/badge/"+key+"/"+m.GetKind()+"/"+url.PathEscape(m.GetName())+".svg", m.GetName()
	}
	page, err := p.o.State.StatusPage(accountID)
	switch {
	case errors.Is(err, state.ErrNotFound):
		v.Page = pageForm{Enabled: true}
	case err != nil:
		return err
	default:
		v.HasPage, v.PagePath = true, "/status/"+page.GetSlug()
		match := page.GetMatch()
		v.Page = pageForm{Enabled: page.GetEnabled(), Slug: page.GetSlug(), Title: page.GetTitle(),
			Tags: strings.Join(match.GetTags(), ", "), Projects: strings.Join(match.GetProjects(), ", "), IDs: strings.Join(match.GetMonitors(), "\n")}
		for _, m := range monitors {
			if onPage(page, m) {
				v.MatchedCount++
				if len(v.Matched) < maxMatchedShown {
					v.Matched = append(v.Matched, displayOf(m))
				}
			}
		}
	}
	if form != nil {
		v.Page = *form
	}
	return nil
}

// onPage tells whether m is on the status page (as control/public
// decides: any entry of the match, or an empty match).
func onPage(page *statev1.StatusPage, m *statev1.Monitor) bool {
	match := page.GetMatch()
	if len(match.GetMonitors())+len(match.GetTags())+len(match.GetProjects()) == 0 {
		return true
	}
	if slices.Contains(match.GetMonitors(), m.GetUuid()) || m.GetProject() != "" && slices.Contains(match.GetProjects(), m.GetProject()) {
		return true
	}
	for _, t := range m.GetTags() {
		if slices.Contains(match.GetTags(), t) {
			return true
		}
	}
	return false
}

func displayOf(m *statev1.Monitor) string {
	if d := m.GetDisplayName(); d != "" {
		return d
	}
	return m.GetName()
}

// origin is the scheme and host r came to.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// handleRegenerateBadgeKey serves POST /account/badge-key: a new badge key,
// once the form's confirm box is ticked; the old badge URLs stop working.
func (p *Panel) handleRegenerateBadgeKey(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	if p.o.Publishing == nil {
		p.notFound(w, r)
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		p.showAccount(w, r, http.StatusUnprocessableEntity, func(v *accountView) {
			v.BadgeError = "Tick the box to confirm: every badge URL with the current key stops working."
		})
		return
	}
	if _, err := p.o.Publishing.RegenerateBadgeKey(r.Context(), s.AccountID); err != nil {
		p.unavailable(w, r, err)
		return
	}
	http.Redirect(w, r, "/account?badge=new#badges", http.StatusSeeOther)
}

// handleStatusPage serves POST /account/status-page: the status page's
// settings, checked as PUT /api/v1/status-page checks them.
func (p *Panel) handleStatusPage(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	if p.o.Publishing == nil {
		p.notFound(w, r)
		return
	}
	form := pageForm{Enabled: r.PostFormValue("enabled") == "on", Slug: strings.TrimSpace(r.PostFormValue("slug")),
		Title: strings.TrimSpace(r.PostFormValue("title")), Tags: r.PostFormValue("tags"), Projects: r.PostFormValue("projects"), IDs: r.PostFormValue("monitors")}
	req := manage.StatusPageRequest{Enabled: form.Enabled, Slug: form.Slug, Title: form.Title, Match: manage.StatusPageMatch{
		Tags: splitList(form.Tags, ","), Projects: splitList(form.Projects, ","), Monitors: strings.Fields(strings.ReplaceAll(form.IDs, ",", " ")),
	}}
	_, errs, err := p.o.Publishing.PutStatusPage(r.Context(), s.AccountID, req)
	if err != nil {
		p.unavailable(w, r, err)
		return
	}
	if len(errs) > 0 {
		p.showAccount(w, r, http.StatusUnprocessableEntity, func(v *accountView) {
			v.Page = form
			v.PageErrors = map[string][]string{}
			for _, e := range errs {
				field, _, _ := strings.Cut(e.Field, ".")
				v.PageErrors[field] = append(v.PageErrors[field], e.Message)
			}
		})
		return
	}
	http.Redirect(w, r, "/account?page=saved#status-page", http.StatusSeeOther)
}

// splitList is the non-empty, trimmed items of s separated by sep.
func splitList(s, sep string) []string {
	var out []string
	for _, item := range strings.Split(s, sep) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
