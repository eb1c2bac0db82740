package panel

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/maintenance"
	"lookout/internal/schedule"
)

// windowRow is one maintenance window as the page shows it.
type windowRow struct {
	ID, Name string
	// When says when it holds, for people.
	When string
	// Matches names what it holds ("every monitor" when its match is
	// empty).
	Matches []string
	// Active: an occurrence is under way until EndsMs; NextMs is the next
	// start (0: none).
	Active        bool
	EndsMs, NextS int64
}

type maintenanceView struct {
	baseView
	NowMs    int64
	Windows  []windowRow
	Monitors []monitorChoice
	Error    string
	// Form is what was typed, kept after a refusal.
	Form windowForm
}

// monitorChoice is a monitor the form offers to match.
type monitorChoice struct {
	UUID, Label string
	Checked     bool
}

// windowForm is the create form.
type windowForm struct {
	Name, Kind, Starts, Ends, Schedule, Zone, Tags, Projects string
	Hours                                                    string
}

// handleMaintenance serves GET /maintenance: the account's windows and a
// form to add one.
func (p *Panel) handleMaintenance(w http.ResponseWriter, r *http.Request) {
	p.showMaintenance(w, r, http.StatusOK, &maintenanceView{Form: windowForm{Kind: "once", Zone: schedule.DefaultZone, Hours: "2"}}, nil)
}

func (p *Panel) showMaintenance(w http.ResponseWriter, r *http.Request, status int, v *maintenanceView, checked []string) {
	s := sessionFrom(r.Context())
	v.Stale = p.refresh(r)
	ws, err := p.o.State.MaintenanceWindows(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	monitors, err := p.o.State.Monitors(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	label := map[string]string{}
	for _, m := range monitors {
		label[m.GetUuid()] = m.GetKind() + " " + m.GetName()
		v.Monitors = append(v.Monitors, monitorChoice{UUID: m.GetUuid(), Label: label[m.GetUuid()], Checked: contains(checked, m.GetUuid())})
	}
	now := p.now()
	v.NowMs = now.UnixMilli()
	for _, mw := range ws {
		v.Windows = append(v.Windows, toWindowRow(mw, now, label))
	}
	v.Title, v.Nav, v.CSRF, v.Account = "Maintenance", "maintenance", s.CSRF, s.Email
	p.render(w, r, status, "maintenance", v)
}

// toWindowRow is mw as the page shows it at now.
func toWindowRow(mw *raftv1.MaintenanceWindow, now time.Time, label map[string]string) windowRow {
	row := windowRow{ID: mw.GetId(), Name: mw.GetName()}
	if mw.GetSchedule() == "" {
		row.When = time.UnixMilli(mw.GetStartsUnixMs()).UTC().Format("Mon 2 Jan 2006 15:04") + " to " + time.UnixMilli(mw.GetEndsUnixMs()).UTC().Format("Mon 2 Jan 2006 15:04") + " UTC"
	} else {
		row.When = "every " + mw.GetSchedule() + " (" + mw.GetTimezone() + ") for " + (time.Duration(mw.GetDurationSeconds()) * time.Second).String()
	}
	m := mw.GetMatch()
	for _, id := range m.GetMonitors() {
		row.Matches = append(row.Matches, cmpOr(label[id], "a deleted monitor"))
	}
	for _, t := range m.GetTags() {
		row.Matches = append(row.Matches, "tag "+t)
	}
	for _, pr := range m.GetProjects() {
		row.Matches = append(row.Matches, "project "+pr)
	}
	if len(row.Matches) == 0 {
		row.Matches = []string{"every monitor"}
	}
	if o, ok := maintenance.Covering(mw, now); ok {
		row.Active, row.EndsMs = true, o.End.UnixMilli()
	}
	if o, ok := maintenance.Next(mw, now); ok {
		row.NextS = o.Start.UnixMilli()
	}
	return row
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// handleCreateWindow serves POST /maintenance: the form is turned into the
// Management API's JSON and validated by the same code
// (internal/maintenance). One-off times are wall-clock times in the zone
// given.
func (p *Panel) handleCreateWindow(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	r.ParseForm()
	f := windowForm{Name: r.PostFormValue("name"), Kind: r.PostFormValue("kind"), Starts: r.PostFormValue("starts"), Ends: r.PostFormValue("ends"),
		Schedule: r.PostFormValue("schedule"), Zone: strings.TrimSpace(r.PostFormValue("zone")), Tags: r.PostFormValue("tags"), Projects: r.PostFormValue("projects"),
		Hours: r.PostFormValue("hours")}
	checked := r.PostForm["monitor"]
	refuse := func(msg string) {
		p.showMaintenance(w, r, http.StatusUnprocessableEntity, &maintenanceView{Form: f, Error: msg}, checked)
	}
	body := map[string]any{"name": f.Name, "match": map[string]any{"monitors": checked, "tags": splitList(f.Tags, ","), "projects": splitList(f.Projects, ",")}}
	if f.Kind == "recurring" {
		hours, err := strconv.ParseFloat(f.Hours, 64)
		if err != nil {
			refuse("The length must be a number of hours.")
			return
		}
		body["schedule"], body["timezone"], body["duration_seconds"] = f.Schedule, f.Zone, int64(hours*3600)
	} else {
		zone, err := schedule.LoadZone(cmpOr(f.Zone, schedule.DefaultZone))
		if err != nil {
			refuse("The time zone must be an IANA name such as Europe/Berlin or UTC.")
			return
		}
		for key, v := range map[string]string{"starts_at": f.Starts, "ends_at": f.Ends} {
			t, err := time.ParseInLocation("2006-01-02T15:04", v, zone)
			if err != nil {
				refuse("Give the start and the end as a date and a time.")
				return
			}
			body[key] = t.Format(time.RFC3339)
		}
	}
	raw, _ := json.Marshal(body)
	mw, errs := maintenance.Parse(raw, maintenance.Options{Now: p.now(), MonitorExists: func(id string) bool {
		_, err := p.o.State.Monitor(s.AccountID, id)
		return err == nil
	}})
	if len(errs) > 0 {
		refuse(strings.Join(errs.Messages(), "; ") + ".")
		return
	}
	mw.Id, mw.AccountId = uuid.NewString(), s.AccountID
	res, err := p.o.Cluster.Apply(r.Context(), &raftv1.Command{Op: &raftv1.Command_PutMaintenanceWindow{PutMaintenanceWindow: &raftv1.PutMaintenanceWindow{Window: mw, Create: true}}})
	if err != nil {
		p.unavailable(w, r, err)
		return
	}
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		refuse(res.GetMessage() + ".")
		return
	}
	http.Redirect(w, r, "/maintenance", http.StatusSeeOther)
}

// handleDeleteWindow serves POST /maintenance/{id}/delete.
func (p *Panel) handleDeleteWindow(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	res, err := p.o.Cluster.Apply(r.Context(), &raftv1.Command{Op: &raftv1.Command_DeleteMaintenanceWindow{DeleteMaintenanceWindow: &raftv1.DeleteMaintenanceWindow{
		AccountId: s.AccountID, Id: r.PathValue("id")}}})
	switch {
	case err != nil:
		p.unavailable(w, r, err)
	case res.GetStatus() == raftv1.Status_STATUS_NOT_FOUND || len(r.PathValue("id")) > state.MaxKeyPartBytes:
		p.notFound(w, r)
	case res.GetStatus() != raftv1.Status_STATUS_OK:
		p.internal(w, r, errString(res.GetMessage()))
	default:
		http.Redirect(w, r, "/maintenance", http.StatusSeeOther)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
