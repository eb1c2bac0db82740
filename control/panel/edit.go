package panel

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"lookout/control/manage"
	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
)

// formView is the page of the monitor form: new, duplicate or edit.
type formView struct {
	baseView
	Kind string
	// Kinds are the kinds a new monitor may be (links; empty when
	// editing or duplicating, whose kind is given).
	Kinds []kindTab
	// Edit: the form changes monitor UUID, called Name.
	Edit       bool
	UUID, Name string
	// From is the uuid of the monitor being duplicated.
	From string
	// Notes are shown under the fields of a copy whose secrets it does
	// not take, by key.
	Notes  map[string]string
	Action string
	Submit string
	Groups []fieldGroup
	// General are the problems of no field of the form; Problems counts
	// them all.
	General  []problem
	Problems int
}

// fieldGroup is a fieldset of the form.
type fieldGroup struct {
	Name   string
	Fields []fieldView
}

// fieldView is one field as the page shows it.
type fieldView struct {
	formField
	// ID is the input's id (the key, with its dot replaced).
	ID       string
	Value    string
	Errors   []problem
	ReadOnly bool
	Options  []option
	// Note is a copy's note about the field's secret.
	Note string
	// Parts are the inputs of a field of two (basic authentication).
	Parts []fieldPart
}

// fieldPart is one input of a field of several.
type fieldPart struct {
	Name, ID, Label, Value string
	// Secret inputs are password inputs that a browser must not fill in
	// with the panel's own sign-in.
	Secret bool
}

// kindTab is a link to the form of a new monitor of a kind.
type kindTab struct {
	Kind, Label string
	Current     bool
}

// kindLabels name the kinds for people.
var kindLabels = map[string]string{manifest.KindPing: "Ping monitor", manifest.KindHTTP: "HTTP check", manifest.KindSSL: "SSL certificate check",
	manifest.KindTCP: "TCP check", manifest.KindDNS: "DNS check"}

func kindTabs(current string) []kindTab {
	out := make([]kindTab, 0, len(allKinds))
	for _, k := range allKinds {
		out = append(out, kindTab{Kind: k, Label: kindLabels[k], Current: k == current})
	}
	return out
}

type option struct {
	Value, Label string
	Selected     bool
}

// handleNewMonitor serves GET /monitors/new?kind=K: the form of a new
// monitor of kind K (ping when none), or with from=UUID a copy of that
// monitor, named NAME-copy, without its secrets (copyWithoutSecrets).
func (p *Panel) handleNewMonitor(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	stale := p.refresh(r)
	kind := r.URL.Query().Get("kind")
	if !slices.Contains(allKinds, kind) {
		kind = manifest.KindPing
	}
	// A new ping monitor starts with the timeout of one made by its
	// first ping.
	values := newValues(kind)
	if kind == manifest.KindPing {
		values["timeout_seconds"] = strconv.Itoa(state.DefaultPingTimeoutSeconds)
	}
	v := &formView{Kind: kind, Kinds: kindTabs(kind), Action: "/monitors/new", Submit: "Create monitor"}
	if from := r.URL.Query().Get("from"); from != "" {
		src, err := p.o.State.Monitor(s.AccountID, from)
		if p.readFailed(w, r, err) {
			return
		}
		m, notes := copyWithoutSecrets(manage.ManifestOf(src))
		values = valuesOf(m)
		values["name"] = m.Name + "-copy"
		v.Kind, v.Kinds, v.From, v.Name, v.UUID, v.Notes = m.Kind, nil, src.GetUuid(), m.Name, src.GetUuid(), notes
	}
	v.Stale = stale
	p.showForm(w, r, http.StatusOK, v, values, nil)
}

// handleCreateMonitor serves POST /monitors/new: the form's manifest goes
// to the Management API's create; refused, the form comes back with what
// was typed and each problem next to its field.
func (p *Panel) handleCreateMonitor(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	kind := r.PostFormValue("kind")
	if !slices.Contains(allKinds, kind) {
		p.errorPage(w, r, http.StatusBadRequest, "Choose the kind of monitor to make: ping, http_check, ssl_check, tcp_check or dns_check.")
		return
	}
	base := map[string]any{"manifest_version": manifest.Version, "kind": kind}
	v := &formView{Kind: kind, Kinds: kindTabs(kind), Action: "/monitors/new", Submit: "Create monitor"}
	// A copy starts from the monitor it copies, so that what the form
	// does not show is copied too.
	if from := r.PostFormValue("from"); from != "" {
		if src, err := p.o.State.Monitor(s.AccountID, from); err == nil && src.GetKind() == kind {
			base = manifestMap(manage.ManifestOf(src))
			_, notes := copyWithoutSecrets(manage.ManifestOf(src))
			v.Kinds, v.From, v.Name, v.UUID, v.Notes = nil, from, src.GetName(), from, notes
		}
	}
	values := postedValues(kind, r.PostForm)
	raw, unread := manifestJSON(base, kind, values)
	if len(unread) > 0 {
		p.showForm(w, r, http.StatusUnprocessableEntity, v, values, withAPIProblems(kind, raw, unread))
		return
	}
	m, err := p.o.Manage.CreateMonitor(r.Context(), s.AccountID, raw)
	if err != nil {
		p.writeRefused(w, r, err, v, values)
		return
	}
	http.Redirect(w, r, "/monitors/"+m.UUID+"?done=created", http.StatusSeeOther)
}

// handleEditMonitor serves GET /monitors/{uuid}/edit: the form of the
// monitor, filled with its manifest.
func (p *Panel) handleEditMonitor(w http.ResponseWriter, r *http.Request) {
	stale := p.refresh(r)
	m, ok := p.monitorOf(w, r)
	if !ok {
		return
	}
	v := editView(m)
	v.Stale = stale
	p.showForm(w, r, http.StatusOK, v, valuesOf(manage.ManifestOf(m)), nil)
}

// handleSaveMonitor serves POST /monitors/{uuid}/edit: the form's values
// laid over the stored manifest replace it through the Management API.
func (p *Panel) handleSaveMonitor(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	p.refresh(r)
	m, ok := p.monitorOf(w, r)
	if !ok {
		return
	}
	v := editView(m)
	values := postedValues(m.GetKind(), r.PostForm)
	if m.GetKind() == manifest.KindPing {
		values["name"] = m.GetName() // shown read-only
	}
	raw, unread := manifestJSON(manifestMap(manage.ManifestOf(m)), m.GetKind(), values)
	if len(unread) > 0 {
		p.showForm(w, r, http.StatusUnprocessableEntity, v, values, withAPIProblems(m.GetKind(), raw, unread))
		return
	}
	if _, err := p.o.Manage.ReplaceMonitor(r.Context(), s.AccountID, m.GetUuid(), raw); err != nil {
		p.writeRefused(w, r, err, v, values)
		return
	}
	http.Redirect(w, r, "/monitors/"+m.GetUuid()+"?done=saved", http.StatusSeeOther)
}

func editView(m *statev1.Monitor) *formView {
	return &formView{Kind: m.GetKind(), Edit: true, UUID: m.GetUuid(), Name: m.GetName(),
		Action: "/monitors/" + m.GetUuid() + "/edit", Submit: "Save changes"}
}

// writeRefused answers a create or save that failed with err: the form
// again (422) when the manifest was refused, with what was typed.
func (p *Panel) writeRefused(w http.ResponseWriter, r *http.Request, err error, v *formView, values formValues) {
	var inv *manage.Invalid
	switch {
	case errors.As(err, &inv):
		p.showForm(w, r, http.StatusUnprocessableEntity, v, values, inv.Errors)
	case errors.Is(err, state.ErrNotFound):
		p.notFound(w, r)
	default:
		p.unavailable(w, r, err)
	}
}

// showForm renders the form of v.Kind with values and the API's errors.
func (p *Panel) showForm(w http.ResponseWriter, r *http.Request, status int, v *formView, values formValues, errs manifest.Errors) {
	s := sessionFrom(r.Context())
	problems, general := fieldProblems(v.Kind, errs)
	v.General, v.Problems = general, len(errs)
	groups, err := p.o.State.NotificationGroups(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	byGroup := map[string][]fieldView{}
	for _, f := range fieldsOf(v.Kind) {
		fv := fieldView{formField: f, ID: "f-" + dashed(f.Key), Value: values[f.Key], Errors: problems[f.Key], ReadOnly: v.Edit && f.Immutable,
			Note: v.Notes[f.Key]}
		switch f.Type {
		case selectField:
			fv.Options = choices(f.Choices, fv.Value, f.Default)
		case basicAuthField:
			fv.Parts = []fieldPart{
				{Name: f.Key + ".username", ID: fv.ID + "-username", Label: "User name", Value: values[f.Key+".username"]},
				{Name: f.Key + ".password", ID: fv.ID + "-password", Label: "Password", Value: values[f.Key+".password"], Secret: true},
			}
		case groupField:
			names := make([]string, 0, len(groups))
			for _, g := range groups {
				names = append(names, g.GetName())
			}
			fv.Options = append([]option{{Value: "", Label: "the account's default channels", Selected: fv.Value == ""}}, choices(names, fv.Value, "")...)
		}
		byGroup[f.Group] = append(byGroup[f.Group], fv)
	}
	for _, g := range formGroups {
		if len(byGroup[g]) > 0 {
			v.Groups = append(v.Groups, fieldGroup{Name: g, Fields: byGroup[g]})
		}
	}
	switch {
	case v.Edit:
		v.Title = "Edit " + v.Name
	case v.From != "":
		v.Title = "Copy of " + v.Name
	default:
		v.Title = "New " + strings.Replace(kindLabels[v.Kind], "Ping", "ping", 1)
	}
	v.Nav, v.CSRF, v.Account = "monitors", s.CSRF, s.Email
	p.render(w, r, status, "form", v)
}

// choices are the options of a select: list, with value (or, when value
// is empty, def) selected; a value not in list is kept as an option, so a
// refused form shows what was sent.
func choices(list []string, value, def string) []option {
	if value == "" {
		value = def
	}
	out := make([]option, 0, len(list)+1)
	found := false
	for _, x := range list {
		out = append(out, option{Value: x, Label: x, Selected: x == value})
		found = found || x == value
	}
	if !found && value != "" {
		out = append(out, option{Value: value, Label: value, Selected: true})
	}
	return out
}

// dashed is key with dots as dashes, for an element id.
func dashed(key string) string {
	b := []byte(key)
	for i, c := range b {
		if c == '.' || c == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}
