package openapi_test

import (
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
)

func init() {
	// The public pages' bodies are checked as strings.
	openapi3filter.RegisterBodyDecoder("image/svg+xml", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
}

// publicCases are the cases of the status page's Management API and of
// the public pages (badges, status pages).
func publicCases(f *fixture) []endpointCase {
	mk := f.main.ManagementKey
	badge := "/badge/" + f.badgeKey
	page := `{"slug":"main","title":"Main","match":{"tags":["db"],"monitors":["` + f.nightly + `"]}}`
	return []endpointCase{
		// Management API: the account's badge key.
		{name: "account with its badge key", method: "GET", path: "/api/v1/account", headers: bearer(mk), status: 200, contains: `"badge_key":"` + f.badgeKey + `"`},

		// Management API: GET and PUT /api/v1/status-page.
		{name: "status page", method: "GET", path: "/api/v1/status-page", headers: bearer(f.readKey), status: 200, contains: `"slug":"main"`},
		{name: "status page of an account without one", method: "GET", path: "/api/v1/status-page", headers: bearer(f.other.ManagementKey), status: 404, contains: "not_found"},
		{name: "status page without key", method: "GET", path: "/api/v1/status-page", status: 401},
		{name: "status page without read scope", method: "GET", path: "/api/v1/status-page", headers: bearer(f.writeKey), status: 403, contains: "insufficient_scope"},
		{name: "put status page", method: "PUT", path: "/api/v1/status-page", headers: bearer(f.writeKey), body: page, status: 200, contains: `"url":"`},
		{name: "put status page disabled", method: "PUT", path: "/api/v1/status-page", headers: bearer(mk), body: `{"enabled":false,"slug":"main","title":"Main"}`, status: 200, contains: `"enabled":false`},
		{name: "put status page again", method: "PUT", path: "/api/v1/status-page", headers: bearer(mk), body: page, status: 200},
		{name: "put status page invalid", method: "PUT", path: "/api/v1/status-page", headers: bearer(mk), body: `{"slug":"Main!","title":""}`, status: 422, contains: `"status_page":["slug_invalid","title_invalid"]`, invalidRequest: true},
		{name: "put status page of a taken slug", method: "PUT", path: "/api/v1/status-page", headers: bearer(f.other.ManagementKey), body: `{"slug":"main","title":"Mine"}`, status: 422, contains: "slug_taken"},
		{name: "put status page without write scope", method: "PUT", path: "/api/v1/status-page", headers: bearer(f.readKey), body: page, status: 403, contains: "insufficient_scope"},
		{name: "put status page without key", method: "PUT", path: "/api/v1/status-page", body: page, status: 401},

		// Public: badges and the status page, without any key.
		{name: "badge svg", method: "GET", path: badge + "/ping/nightly.svg", status: 200, contains: "nightly"},
		{name: "badge svg of a tag", method: "GET", path: badge + "/tag/db.svg", status: 200, contains: "<svg"},
		{name: "badge svg of an unknown key", method: "GET", path: "/badge/bk_nosuch/ping/nightly.svg", status: 404},
		{name: "badge svg of an unknown monitor", method: "GET", path: badge + "/http_check/nosuch.svg", status: 404},
		{name: "badge json", method: "GET", path: badge + "/http_check/homepage.json", status: 200, contains: `"kind":"http_check"`},
		{name: "badge json of an unknown kind", method: "GET", path: badge + "/cron/nightly.json", status: 404, invalidRequest: true},
		{name: "badge json of an unknown tag", method: "GET", path: badge + "/tag/nosuch.json", status: 404, contains: "not found"},
		{name: "public status page", method: "GET", path: "/status/main", status: 200, contains: "nightly"},
		{name: "public status page unknown", method: "GET", path: "/status/nosuch", status: 404},
		{name: "badge rate limited", method: "GET", path: badge + "/ping/nightly.svg", status: 429, setup: func(f *fixture) func() {
			for range 200 {
				if f.send("GET", badge+"/ping/nightly.svg", nil, "").status == 429 {
					break
				}
			}
			return func() { f.clock.advance(time.Minute) }
		}},
	}
}
