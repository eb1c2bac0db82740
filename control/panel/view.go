package panel

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"lookout/control/admin"
	"lookout/control/state"
)

// pageNames are the templates under templates/, each a page built on
// layout.html (login has its own frame).
var pageNames = []string{"login", "monitors", "monitor", "form", "keys", "channels", "account", "users", "invite", "audit", "error", "maintenance"}

// baseView is what every page's layout needs.
type baseView struct {
	Title string
	// Nav is the menu entry to highlight.
	Nav string
	// CSRF is the token the page's forms carry.
	CSRF string
	// Account is the signed-in user's e-mail (empty on the sign-in page).
	Account string
	// Role is the signed-in user's (render sets it): the page shows the
	// forms the role may use (IsEditor, IsOwner); the routes check it.
	Role string
	// Stale: the page was read from this node's copy without a leader.
	Stale bool
	// Flash is a one-line notice at the top.
	Flash string
}

func (b *baseView) base() *baseView { return b }

// IsEditor tells whether the signed-in user may change monitors, channels
// and groups.
func (b *baseView) IsEditor() bool { return editor.allows(b.Role) }

// IsOwner tells whether the signed-in user may manage keys, users and the
// account.
func (b *baseView) IsOwner() bool { return owner.allows(b.Role) }

type view interface{ base() *baseView }

var funcs = template.FuncMap{
	"ago":      ago,
	"until":    until,
	"rfc3339":  func(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) },
	"clock":    clockMs,
	"seconds":  seconds,
	"join":     strings.Join,
	"contains": func(list []string, s string) bool { return contains(list, s) },
	"deref":    func(f *float64) float64 { return *f },
	"secs":     func(s int64) string { return short(time.Duration(s) * time.Second) },
	"derefInt": func(n *int64) int64 { return *n },
	"snippet":  func(id, label, text string) snippet { return snippet{id, label, text} },
	// nextOf is what the "next" part shows: a row, at a time.
	"nextOf": func(r monitorRow, nowMs int64) nextView { return nextView{r, nowMs} },
	// tickY places a y axis label level with its gridline (the plot
	// starts 14 px down the chart).
	"tickY": func(y float64) float64 { return 14 + y + 4 },
}

// nextView is a monitor's row with the time its "next" is shown at.
type nextView struct {
	Row   monitorRow
	NowMs int64
}

// snippet is text to copy, with its label (parts.html).
type snippet struct{ ID, Label, Text string }

// parsePages parses every page with the layout, once.
func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/quiet.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("panel: parse %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes the page; a template error is a 500 (the page is rendered
// to a buffer first, so nothing half-written goes out).
func (p *Panel) render(w http.ResponseWriter, r *http.Request, status int, name string, v view) {
	if s, ok := r.Context().Value(ctxKey{}).(*session); ok {
		v.base().Role = s.Role
	}
	var buf bytes.Buffer
	if err := p.pages[name].ExecuteTemplate(&buf, "page", v); err != nil {
		p.log.Error("render page", "page", name, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// renderFragment executes one named template of a page into a string.
func (p *Panel) renderFragment(page, name string, data any) (string, error) {
	var buf bytes.Buffer
	err := p.pages[page].ExecuteTemplate(&buf, name, data)
	return buf.String(), err
}

type errorView struct {
	baseView
	Status  int
	Message string
}

// errorPage answers status with a page saying message.
func (p *Panel) errorPage(w http.ResponseWriter, r *http.Request, status int, message string) {
	v := &errorView{Status: status, Message: message}
	v.Title = http.StatusText(status)
	if s, ok := r.Context().Value(ctxKey{}).(*session); ok {
		v.CSRF = s.CSRF
		v.Account = s.Email
	}
	p.render(w, r, status, "error", v)
}

// notFound is the page of a monitor, key or channel that does not exist
// or is another account's: the two are not told apart.
// readFailed answers a read that failed (err not nil): 404 for what is not
// there (state.ErrNotFound, or an operator API 404), 500 otherwise. It
// reports whether it answered.
func (p *Panel) readFailed(w http.ResponseWriter, r *http.Request, err error) bool {
	var e *admin.Error
	switch {
	case err == nil:
		return false
	case errors.Is(err, state.ErrNotFound), errors.As(err, &e) && e.Status == http.StatusNotFound:
		p.notFound(w, r)
	default:
		p.internal(w, r, err)
	}
	return true
}

func (p *Panel) notFound(w http.ResponseWriter, r *http.Request) {
	p.errorPage(w, r, http.StatusNotFound, "Not found. It may have been deleted, or it is not in your account.")
}

// internal logs err and answers 500.
func (p *Panel) internal(w http.ResponseWriter, r *http.Request, err error) {
	p.log.Error("panel request failed", "path", r.URL.Path, "error", err)
	p.errorPage(w, r, http.StatusInternalServerError, "Something went wrong on our side; the error is in the node's log.")
}

// clockMs is ms as a UTC date and time.
func clockMs(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05") }

// itoa is strconv.Itoa.
func itoa(n int) string { return strconv.Itoa(n) }

// ago is ms as a time relative to now: "12s ago", "3m ago", "never".
func ago(nowMs, ms int64) string {
	if ms <= 0 {
		return "never"
	}
	d := time.Duration(nowMs-ms) * time.Millisecond
	if d < 0 {
		return "in " + short(-d)
	}
	if d < time.Second {
		return "just now"
	}
	return short(d) + " ago"
}

// until is ms as a time from now: "in 4m", "5m overdue", "-".
func until(nowMs, ms int64) string {
	if ms <= 0 {
		return "–"
	}
	d := time.Duration(ms-nowMs) * time.Millisecond
	if d < 0 {
		return short(-d) + " overdue"
	}
	return "in " + short(d)
}

// short is d in its largest unit: 45s, 12m, 5h, 3d.
func short(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// seconds formats a duration in seconds: 4 ms, 1.25s, 12.3s, 4m 05s.
func seconds(s float64) string {
	switch {
	case s < 1:
		return fmt.Sprintf("%.0f ms", s*1000)
	case s < 10:
		return fmt.Sprintf("%.2fs", s)
	case s < 60:
		return fmt.Sprintf("%.1fs", s)
	}
	m := math.Floor(s / 60)
	return fmt.Sprintf("%.0fm %02.0fs", m, s-60*m)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
