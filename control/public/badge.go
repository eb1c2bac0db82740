package public

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"
	"unicode/utf8"

	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Badges: GET /badge/{badge key}/{kind}/{name}.svg (or .json) for one
// monitor of kind ping, http_check or ssl_check, and
// /badge/{badge key}/tag/{tag}.svg (or .json) for the monitors with a tag.

// kindTag is the badge "kind" of a tag's badge.
const kindTag = "tag"

// badgeJSON is a badge as JSON.
type badgeJSON struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
}

// badge answers a badge request.
func (p *Public) badge(r *http.Request, _ int64) answer {
	file := r.PathValue("file")
	var name, format string
	if n, ok := strings.CutSuffix(file, ".svg"); ok {
		name, format = n, contentSVG
	} else if n, ok := strings.CutSuffix(file, ".json"); ok {
		name, format = n, contentJSON
	} else {
		return notFound(contentText)
	}
	kind := r.PathValue("kind")
	switch kind {
	case state.KindPing, state.KindHTTPCheck, state.KindSSLCheck, kindTag:
	default:
		return notFound(format)
	}
	acct, err := p.state.AccountByBadgeKey(r.PathValue("key"))
	if errors.Is(err, state.ErrNotFound) || name == "" || len(name) > state.MaxKeyPartBytes {
		return notFound(format)
	}
	if err != nil {
		return p.internal("badge", err)
	}
	var status string
	if kind == kindTag {
		status, err = p.tagStatus(acct.GetId(), name)
	} else {
		status, err = p.monitorStatus(acct.GetId(), kind, name)
	}
	if errors.Is(err, state.ErrNotFound) {
		return notFound(format)
	}
	if err != nil {
		return p.internal("badge", err)
	}
	if format == contentJSON {
		b, _ := json.Marshal(badgeJSON{Name: name, Kind: kind, Status: status})
		return answer{status: http.StatusOK, contentType: contentJSON, body: append(b, '\n')}
	}
	return answer{status: http.StatusOK, contentType: contentSVG, body: badgeSVG(name, status)}
}

// monitorStatus is the status of the account's monitor of kind called
// name.
func (p *Public) monitorStatus(accountID, kind, name string) (string, error) {
	m, err := p.state.MonitorByName(accountID, kind, name)
	if err != nil {
		return "", err
	}
	unknown, err := p.state.UnknownSince(m)
	if err != nil {
		return "", err
	}
	return p.statusOf(m, unknown)
}

// tagStatus is the most severe status of the account's monitors tagged
// tag; ErrNotFound when none is.
func (p *Public) tagStatus(accountID, tag string) (string, error) {
	monitors, err := p.state.Monitors(accountID)
	if err != nil {
		return "", err
	}
	worst, found := "", false
	for _, m := range monitors {
		if !hasTag(m, tag) {
			continue
		}
		unknown, err := p.state.UnknownSince(m)
		if err != nil {
			return "", err
		}
		st, err := p.statusOf(m, unknown)
		if err != nil {
			return "", err
		}
		if !found || severity[st] > severity[worst] {
			worst, found = st, true
		}
	}
	if !found {
		return "", state.ErrNotFound
	}
	return worst, nil
}

func hasTag(m *statev1.Monitor, tag string) bool {
	for _, t := range m.GetTags() {
		if t == tag {
			return true
		}
	}
	return false
}

// badgeColors are the right half's colours, as shields.io's.
var badgeColors = map[string]string{
	statusUp: "#4c1", statusDown: "#e05d44", statusLate: "#dfb317",
	statusPaused: "#9f9f9f", statusNew: "#9f9f9f", statusUnknown: "#9f9f9f",
}

// maxBadgeLabel is the longest label a badge shows, in characters; a
// longer name is cut with an ellipsis.
const maxBadgeLabel = 40

// badgeSVG is a flat, shields-style badge "label | status".
func badgeSVG(label, status string) []byte {
	if utf8.RuneCountInString(label) > maxBadgeLabel {
		label = string([]rune(label)[:maxBadgeLabel-1]) + "…"
	}
	lw, sw := textWidth(label)+10, textWidth(status)+10
	w := lw + sw
	l, s := html.EscapeString(label), html.EscapeString(status)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s: %s">`, w, l, s)
	fmt.Fprintf(&b, `<title>%s: %s</title>`, l, s)
	b.WriteString(`<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`)
	fmt.Fprintf(&b, `<clipPath id="r"><rect width="%d" height="20" rx="3" fill="#fff"/></clipPath>`, w)
	fmt.Fprintf(&b, `<g clip-path="url(#r)"><rect width="%d" height="20" fill="#555"/><rect x="%d" width="%d" height="20" fill="%s"/><rect width="%d" height="20" fill="url(#s)"/></g>`,
		lw, lw, sw, badgeColors[status], w)
	b.WriteString(`<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" text-rendering="geometricPrecision" font-size="11">`)
	for _, t := range []struct {
		x, w int
		s    string
	}{{lw / 2, lw - 10, l}, {lw + sw/2, sw - 10, s}} {
		fmt.Fprintf(&b, `<text x="%d" y="15" fill="#010101" fill-opacity=".3" textLength="%d" lengthAdjust="spacingAndGlyphs">%s</text>`, t.x, t.w, t.s)
		fmt.Fprintf(&b, `<text x="%d" y="14" textLength="%d" lengthAdjust="spacingAndGlyphs">%s</text>`, t.x, t.w, t.s)
	}
	b.WriteString("</g></svg>\n")
	return []byte(b.String())
}

// textWidth estimates the width in pixels of s in 11px Verdana (the
// badge's font; the text is stretched to it, textLength).
func textWidth(s string) int {
	w := 0.0
	for _, r := range s {
		switch {
		case strings.ContainsRune("il.,:;|!'", r):
			w += 3.5
		case strings.ContainsRune("fjrt()[]{} -/", r):
			w += 4.8
		case strings.ContainsRune("mwMW", r):
			w += 10.5
		case r >= 'A' && r <= 'Z':
			w += 7.8
		case r < 0x80:
			w += 6.9
		default:
			w += 11 // CJK, symbols: roughly square
		}
	}
	return int(w + 0.5)
}
