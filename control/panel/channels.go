package panel

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"lookout/control/admin"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// The Channels page (/channels) lists the account's alert channels and
// notification groups, with a form to add each; a channel's page
// (/channels/{id}: channelpage.go) and a group's (/groups/{id}:
// groups.go) change and delete them. All three are the one template
// channels.html, whose Page says which.

type channelRow struct {
	ID, Type, Name string
	Default        bool
}

type groupRow struct {
	ID, Name string
	Channels []string
}

type channelsView struct {
	baseView
	// Page is list, channel or group.
	Page string
	// Notice and Error report the last action.
	Notice, Error string
	// Secret is a webhook secret the service just made (shown once).
	Secret   string
	Channels []channelRow
	Groups   []groupRow
	// Form adds a channel (list) or changes one (channel); GroupForm
	// adds a group (list) or changes one (group).
	Form      *channelForm
	GroupForm *groupForm
	// Channel and Deliveries are the channel page's.
	Channel    *admin.Channel
	Deliveries []deliveryRow
	// Group is the group page's.
	Group *groupRow
	// DeleteError is why the last delete was refused.
	DeleteError string
}

// handleChannels serves GET /channels: the account's alert channels and
// notification groups; ?deleted=NAME after a delete.
func (p *Panel) handleChannels(w http.ResponseWriter, r *http.Request) {
	v := &channelsView{}
	if d := r.URL.Query().Get("deleted"); d != "" {
		v.Notice = "Deleted " + d + "."
	}
	p.showChannels(w, r, http.StatusOK, v)
}

func (p *Panel) showChannels(w http.ResponseWriter, r *http.Request, status int, v *channelsView) {
	s := sessionFrom(r.Context())
	v.Stale = p.refresh(r)
	if err := p.listChannels(s.AccountID, v); err != nil {
		p.internal(w, r, err)
		return
	}
	if v.Form == nil {
		v.Form = newChannelForm(p.o.Admin.ChannelTypes(), "/channels", "Add channel")
	}
	if v.GroupForm == nil {
		v.GroupForm = &groupForm{Errors: map[string]string{}}
	}
	v.GroupForm.Action, v.GroupForm.Submit = "/groups", "Add group"
	v.GroupForm.choices(v.Channels, nil)
	p.renderChannels(w, r, status, "list", "Channels", v)
}

// listChannels reads the account's channels and groups into v.
func (p *Panel) listChannels(accountID string, v *channelsView) error {
	channels, err := p.o.State.Channels(accountID)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, c := range channels {
		v.Channels = append(v.Channels, channelRow{ID: c.GetId(), Type: c.GetType(), Name: c.GetName(), Default: c.GetIsDefault()})
		names[c.GetId()] = c.GetName() + " (" + c.GetType() + ")"
	}
	groups, err := p.o.State.NotificationGroups(accountID)
	if err != nil {
		return err
	}
	for _, g := range groups {
		v.Groups = append(v.Groups, groupRowOf(g, names))
	}
	return nil
}

// groupRowOf is g as listed: its channels by name and type.
func groupRowOf(g *statev1.NotificationGroup, names map[string]string) groupRow {
	row := groupRow{ID: g.GetId(), Name: g.GetName()}
	for _, c := range storedGroupChannels(g) {
		row.Channels = append(row.Channels, c.label(names))
	}
	return row
}

// renderChannels renders page of the Channels template.
func (p *Panel) renderChannels(w http.ResponseWriter, r *http.Request, status int, page, title string, v *channelsView) {
	s := sessionFrom(r.Context())
	v.Page, v.Title, v.Nav, v.CSRF, v.Account = page, title, "channels", s.CSRF, s.Email
	if v.Form != nil {
		v.Form.CSRF = s.CSRF
	}
	if v.GroupForm != nil {
		v.GroupForm.CSRF = s.CSRF
	}
	p.render(w, r, status, "channels", v)
}

// handleCreateChannel serves POST /channels: a type, a name, the type's
// settings and default, checked by the operator API's rules.
func (p *Panel) handleCreateChannel(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	form := newChannelForm(p.o.Admin.ChannelTypes(), "/channels", "Add channel")
	form.read(r)
	req, err := form.request()
	if err == nil {
		var created *admin.ChannelCreated
		if created, err = p.o.Admin.CreateChannel(r.Context(), s.AccountID, req); err == nil {
			v := &channelsView{Notice: "Channel " + created.Name + " created.", Secret: madeSecret(req.Config, created.Config)}
			p.showChannels(w, r, http.StatusCreated, v)
			return
		}
	}
	if form.refuse(err) {
		p.showChannels(w, r, http.StatusBadRequest, &channelsView{Form: form, Error: "The channel was not saved: see the fields marked below."})
		return
	}
	p.unavailable(w, r, err)
}

// madeSecret is the webhook secret of stored that sent did not hold (the
// service made it), or "".
func madeSecret(sent, stored json.RawMessage) string {
	var in, out struct {
		Secret string `json:"secret"`
	}
	if json.Unmarshal(stored, &out) != nil || out.Secret == "" || strings.Contains(out.Secret, "****") {
		return ""
	}
	if json.Unmarshal(sent, &in) == nil && in.Secret == out.Secret {
		return ""
	}
	return out.Secret
}

// handleTestChannel serves POST /channels/{id}/test: a test message goes
// out now through the alert channel's own sender. The answer is the page
// the form was on (the list, or the channel's page with ?from=channel).
func (p *Panel) handleTestChannel(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	err := p.o.Admin.TestChannel(r.Context(), s.AccountID, r.PathValue("id"), scheme+"://"+r.Host+"/")
	var e *admin.Error
	v := &channelsView{}
	status := http.StatusOK
	switch {
	case err == nil:
		v.Notice = "Test message delivered."
	case errors.As(err, &e) && e.Status == http.StatusNotFound:
		p.notFound(w, r)
		return
	case errors.As(err, &e):
		status, v.Error = http.StatusBadGateway, "Test message not delivered: "+e.Message
	default:
		p.unavailable(w, r, err)
		return
	}
	if r.URL.Query().Get("from") == "channel" {
		p.showChannel(w, r, status, v)
		return
	}
	p.showChannels(w, r, status, v)
}
