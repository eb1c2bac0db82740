package panel

import (
	"net/http"
	"net/url"
	"strings"
)

// pingHelp is how a job pings a ping monitor: its URL and snippets to
// copy, at the address people reach the node at.
type pingHelp struct {
	// URL is GET /ping/{name}, without a status.
	URL string
	// Curl reports a finished run with curl, the key in a header (URLs
	// end up in logs; the header is the recommended way).
	Curl string
	// Exec runs a command with lookout exec, which reports its start,
	// its end and its exit code.
	Exec string
	// Env sets the address and the key the two read.
	Env string
}

func newPingHelp(base, name string) *pingHelp {
	u := base + "/ping/" + url.PathEscape(name)
	return &pingHelp{
		URL:  u,
		Env:  "export LOOKOUT_ADDR=" + shellQuote(base) + "\nexport LOOKOUT_INGEST_KEY=ck_...   # an ingest key of the account (Keys)",
		Curl: `curl -fsS -m 10 --retry 3 -H "Authorization: Bearer $LOOKOUT_INGEST_KEY" ` + shellQuote(u+"?status=complete"),
		Exec: "lookout exec " + shellQuote(name) + " -- COMMAND",
	}
}

// publicURL is the address of the node for people and jobs: --public-url,
// else the origin the page was asked at.
func (p *Panel) publicURL(r *http.Request) string {
	if p.o.PublicURL != "" {
		return strings.TrimRight(p.o.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	safe := true
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:=%+@", c)) {
			safe = false
			break
		}
	}
	if safe && s != "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
