package panel

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"lookout/internal/pingstate"
)

// listPageSize is how many monitors a page of the list shows.
const listPageSize = 100

// listRank orders the list: the ones needing attention first.
var listRank = map[string]int{"red": 0, "amber": 1, "blue": 2, "green": 3, "gray": 4}

type monitorsView struct {
	baseView
	NowMs int64
	Rows  []monitorRow
	// Total, Down and Late count the whole account.
	Total, Down, Late int
	// The choices of the filters, from the whole account.
	Projects, Tags, States []string
	// The filters and the search (q) asked for.
	Project, Tag, StateFilter, Query string
	Filtered                         bool
	// CanEdit: the panel has the monitor forms and the user may use them.
	CanEdit bool
	// Matched counts the monitors the filters let through; the page
	// shows those From to To (1-based) of them, page Page of Pages.
	Matched, From, To, Page, Pages int
	// Links to the other pages, with the same filters ("" when none).
	FirstURL, PrevURL, NextURL, LastURL string
}

// handleMonitors serves GET /: a page of 100 of the account's monitors,
// failing ones first, then by name; ?q= searches names and display names,
// ?project=, ?tag= and ?state= filter, ?page=N (from 1) turns the pages.
// Every monitor is read (for the order, the counts and the filters' choices)
// with state.MonitorList, which reads no history; the times of a row are
// worked out for the rows shown only.
func (p *Panel) handleMonitors(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	stale := p.refresh(r)
	listed, err := p.o.State.MonitorList(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	q := r.URL.Query()
	v := &monitorsView{NowMs: p.now().UnixMilli(), Project: q.Get("project"), Tag: q.Get("tag"), StateFilter: q.Get("state"),
		Query: strings.TrimSpace(q.Get("q"))}
	v.Filtered = v.Project != "" || v.Tag != "" || v.StateFilter != "" || v.Query != ""
	query := strings.ToLower(v.Query)
	projects, tags, states := map[string]bool{}, map[string]bool{}, map[string]bool{}
	rows := make([]monitorRow, 0, len(listed))
	matched := make([]int, 0, len(listed)) // indexes into listed, of rows
	for i, lm := range listed {
		row := listRow(lm)
		v.Total++
		switch row.State {
		case pingstate.Down, pingstate.Failed:
			v.Down++
		case pingstate.Late:
			v.Late++
		}
		if row.Project != "" {
			projects[row.Project] = true
		}
		for _, t := range row.Tags {
			tags[t] = true
		}
		states[row.State] = true
		if (v.Project == "" || row.Project == v.Project) && (v.Tag == "" || contains(row.Tags, v.Tag)) &&
			(v.StateFilter == "" || row.State == v.StateFilter) && (query == "" || matches(row, query)) {
			rows = append(rows, row)
			matched = append(matched, i)
		}
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ra, rb := &rows[a], &rows[b]
		if d := listRank[ra.Color] - listRank[rb.Color]; d != 0 {
			return d
		}
		if d := strings.Compare(ra.Display, rb.Display); d != 0 {
			return d
		}
		return strings.Compare(ra.Name, rb.Name)
	})
	v.Matched = len(rows)
	v.Pages = max(1, (v.Matched+listPageSize-1)/listPageSize)
	v.Page, _ = strconv.Atoi(q.Get("page"))
	v.Page = min(max(v.Page, 1), v.Pages)
	first := (v.Page - 1) * listPageSize
	for _, i := range order[first:min(first+listPageSize, len(order))] {
		row := rows[i]
		p.addTimes(&row, listed[matched[i]], v.NowMs)
		v.Rows = append(v.Rows, row)
	}
	if len(v.Rows) > 0 {
		v.From, v.To = first+1, first+len(v.Rows)
	}
	if err := p.fillUptimes(v.Rows, v.NowMs); err != nil { // the rows shown only
		p.internal(w, r, err)
		return
	}
	v.pageLinks(q)
	v.Projects, v.Tags, v.States = sortedKeys(projects), sortedKeys(tags), sortedKeys(states)
	v.Title = listTitle(v.Down, v.Late)
	v.CanEdit = p.o.Manage != nil && editor.allows(s.Role)
	v.Nav, v.CSRF, v.Account, v.Stale = "monitors", s.CSRF, s.Email, stale
	if d := q.Get("deleted"); d != "" {
		v.Flash = "Deleted " + d + "."
	}
	p.render(w, r, http.StatusOK, "monitors", v)
}

// matches tells whether the row's name or display name holds query
// (lower case).
func matches(row monitorRow, query string) bool {
	return strings.Contains(strings.ToLower(row.Name), query) || strings.Contains(strings.ToLower(row.Display), query)
}

// pageLinks sets the links to the first, previous, next and last pages,
// keeping the filters and the search.
func (v *monitorsView) pageLinks(q url.Values) {
	link := func(page int) string {
		u := url.Values{}
		for _, k := range []string{"q", "project", "tag", "state"} {
			if x := q.Get(k); x != "" {
				u.Set(k, x)
			}
		}
		if page > 1 {
			u.Set("page", strconv.Itoa(page))
		}
		if len(u) == 0 {
			return "/"
		}
		return "/?" + u.Encode()
	}
	if v.Page > 1 {
		v.FirstURL, v.PrevURL = link(1), link(v.Page-1)
	}
	if v.Page < v.Pages {
		v.NextURL, v.LastURL = link(v.Page+1), link(v.Pages)
	}
}
