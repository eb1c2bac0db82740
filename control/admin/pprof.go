package admin

import (
	"net/http"
	"net/http/pprof"
)

// pprofPrefix is where the Go profiler is served, behind the operator
// token like the rest of /admin/v1.
const pprofPrefix = "/admin/v1/debug/pprof/"

// registerPprof adds net/http/pprof's handlers to routes under
// pprofPrefix, explicitly: the node never serves http.DefaultServeMux,
// where the package's init registers them. The index's links are
// relative, so they stay under the prefix; pprof.Index serves named
// profiles only under /debug/pprof/, so they are routed by name here.
func registerPprof(routes *http.ServeMux) {
	routes.HandleFunc("GET "+pprofPrefix, pprof.Index)
	routes.HandleFunc("GET "+pprofPrefix+"cmdline", pprof.Cmdline)
	routes.HandleFunc("GET "+pprofPrefix+"profile", pprof.Profile)
	routes.HandleFunc("GET "+pprofPrefix+"symbol", pprof.Symbol)
	routes.HandleFunc("POST "+pprofPrefix+"symbol", pprof.Symbol)
	routes.HandleFunc("GET "+pprofPrefix+"trace", pprof.Trace)
	routes.HandleFunc("GET "+pprofPrefix+"{name}", func(w http.ResponseWriter, r *http.Request) {
		pprof.Handler(r.PathValue("name")).ServeHTTP(w, r)
	})
}
