package panel

import (
	"fmt"
	"io/fs"
	"net/http"

	"lookout/control/state"
)

// access is who may use a route: anyone, or a signed-in user with at least
// a role. Every route of the panel names one in its table (routes); the
// check is made once, by guard, before the handler runs, whatever the
// page's forms show. Its zero value is no access at all, so a route added
// without one is refused at start (Register panics) and by the role table
// test.
type access int

const (
	// public routes need no session: sign-in (with SSO too), assets,
	// invitation links.
	public access = iota + 1
	// viewer routes need a session of any role: pages that read.
	viewer
	// editor routes need an editor or owner: monitors, channels, groups,
	// maintenance windows and pauses.
	editor
	// owner routes need an owner: keys, users and invitations, the
	// account's badge key and status page.
	owner
)

// String names the access as docs and tests do.
func (a access) String() string {
	switch a {
	case public:
		return "public"
	case viewer:
		return state.RoleViewer
	case editor:
		return state.RoleEditor
	case owner:
		return state.RoleOwner
	}
	return fmt.Sprintf("access(%d)", int(a))
}

// allows tells whether a user with role may use a route of access a.
func (a access) allows(role string) bool {
	switch a {
	case public:
		return true
	case viewer, editor, owner:
		return state.RoleRank(role) >= int(a-public)
	}
	return false
}

// route is one line of the panel's route table.
type route struct {
	pattern string
	access  access
	handler http.Handler
}

// Mux is where Register adds the routes (an *http.ServeMux).
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// routes is the panel's route table: every page, form and stream with
// who may use it.
func (p *Panel) routes() []route {
	static, _ := fs.Sub(staticFS, "static")
	h := func(pattern string, a access, f http.HandlerFunc) route { return route{pattern, a, f} }
	rs := []route{
		{"GET /static/", public, http.StripPrefix("/static/", cacheFor(http.FileServerFS(static)))},
		h("GET /login", public, p.handleLoginPage),
		h("POST /login", public, p.handleLogin),
		h("GET /invite/{token}", public, p.handleInvitePage),
		h("POST /invite/{token}", public, p.handleAcceptInvite),
		h("POST /logout", viewer, p.handleLogout),
		h("GET /{$}", viewer, p.handleMonitors),
		h("GET /live", viewer, p.handleListLive),
		h("GET /monitors/{uuid}", viewer, p.handleMonitor),
		h("GET /monitors/{uuid}/live", viewer, p.handleMonitorLive),
		h("POST /monitors/{uuid}/delete", editor, p.handleDelete),
		h("GET /channels", viewer, p.handleChannels),
		h("POST /channels", editor, p.handleCreateChannel),
		h("GET /channels/{id}", viewer, p.handleChannel),
		h("POST /channels/{id}", editor, p.handleUpdateChannel),
		h("POST /channels/{id}/delete", editor, p.handleDeleteChannel),
		h("POST /channels/{id}/test", editor, p.handleTestChannel),
		h("POST /groups", editor, p.handleCreateGroup),
		h("GET /groups/{id}", viewer, p.handleGroup),
		h("POST /groups/{id}", editor, p.handleUpdateGroup),
		h("POST /groups/{id}/delete", editor, p.handleDeleteGroup),
		h("GET /account", viewer, p.handleAccount),
		h("POST /account/badge-key", owner, p.handleRegenerateBadgeKey),
		h("POST /account/status-page", owner, p.handleStatusPage),
		h("GET /keys", owner, p.handleKeys),
		h("POST /keys", owner, p.handleCreateKey),
		h("POST /keys/{id}/revoke", owner, p.handleRevokeKey),
		h("GET /users", owner, p.handleUsers),
		h("POST /users/invite", owner, p.handleInvite),
		h("POST /users/{id}/role", owner, p.handleSetRole),
		h("POST /users/{id}/remove", owner, p.handleRemoveUser),
		h("POST /users/invites/{id}/revoke", owner, p.handleRevokeInvite),
		h("POST /monitors/{uuid}/pause", editor, p.handlePause),
		h("POST /monitors/{uuid}/resume", editor, p.handleResume),
		h("GET /maintenance", viewer, p.handleMaintenance),
		h("GET /audit", viewer, p.handleAudit),
		h("POST /maintenance", editor, p.handleCreateWindow),
		h("POST /maintenance/{id}/delete", editor, p.handleDeleteWindow),
	}
	if p.sso != nil {
		rs = append(rs,
			h("GET /login/sso", public, p.handleSSO),
			h("GET /login/sso/callback", public, p.handleSSOCallback))
	}
	if p.o.Manage != nil {
		rs = append(rs,
			h("GET /monitors/new", editor, p.handleNewMonitor),
			h("POST /monitors/new", editor, p.handleCreateMonitor),
			h("GET /monitors/{uuid}/edit", editor, p.handleEditMonitor),
			h("POST /monitors/{uuid}/edit", editor, p.handleSaveMonitor))
	}
	return rs
}

// Register adds the panel's routes to mux, beside the APIs' (their paths
// are more specific or method-bound, so neither shadows the other), each
// behind the check of its access (guard).
func (p *Panel) Register(mux Mux) {
	for _, rt := range p.routes() {
		mux.Handle(rt.pattern, p.guard(rt))
	}
}

// guard is rt's handler behind its access check: a public route as it is,
// any other for a signed-in user whose role allows it (signedIn).
func (p *Panel) guard(rt route) http.Handler {
	switch rt.access {
	case public:
		return rt.handler
	case viewer, editor, owner:
		return p.signedIn(rt.access, rt.handler)
	}
	panic("panel: route " + rt.pattern + " has no access: give it public, viewer, editor or owner")
}

// cacheFor lets browsers keep the embedded assets for an hour.
func cacheFor(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		h.ServeHTTP(w, r)
	})
}
