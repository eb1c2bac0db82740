package panel

// RouteAccess is who may use each route of p's table, by pattern: public,
// viewer, editor or owner (for the role table test).
func RouteAccess(p *Panel) map[string]string {
	out := map[string]string{}
	for _, rt := range p.routes() {
		out[rt.pattern] = rt.access.String()
	}
	return out
}
