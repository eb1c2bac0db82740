package panel

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"lookout/control/admin"
)

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
	Types    []string
	Channels []channelRow
	Groups   []groupRow
	// Notice and Error report the last action.
	Notice, Error string
	// Secret is a webhook secret the service just made (shown once).
	Secret string
	// Form is what was typed, kept after a refusal.
	FormType, FormName, FormConfig, GroupName, GroupChannels string
}

// handleChannels serves GET /channels: the account's alert channels and
// notification groups.
func (p *Panel) handleChannels(w http.ResponseWriter, r *http.Request) {
	p.showChannels(w, r, http.StatusOK, &channelsView{})
}

func (p *Panel) showChannels(w http.ResponseWriter, r *http.Request, status int, v *channelsView) {
	s := sessionFrom(r.Context())
	v.Stale = p.refresh(r)
	channels, err := p.o.State.Channels(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	for _, c := range channels {
		v.Channels = append(v.Channels, channelRow{ID: c.GetId(), Type: c.GetType(), Name: c.GetName(), Default: c.GetIsDefault()})
	}
	groups, err := p.o.State.NotificationGroups(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	for _, g := range groups {
		row := groupRow{ID: g.GetId(), Name: g.GetName()}
		var chans []struct {
			Type string  `json:"type"`
			Name *string `json:"name"`
		}
		_ = json.Unmarshal(g.GetChannelsJson(), &chans)
		for _, c := range chans {
			label := c.Type
			if c.Name != nil && *c.Name != "" {
				label = *c.Name + " (" + c.Type + ")"
			}
			row.Channels = append(row.Channels, label)
		}
		v.Groups = append(v.Groups, row)
	}
	v.Types = p.o.Admin.ChannelTypes()
	if v.FormConfig == "" {
		v.FormConfig = "{}"
	}
	if v.GroupChannels == "" {
		v.GroupChannels = "[]"
	}
	v.Title, v.Nav, v.CSRF, v.Account = "Channels", "channels", s.CSRF, s.Email
	p.render(w, r, status, "channels", v)
}

// handleCreateChannel serves POST /channels: type, name, config (JSON)
// and default, checked by the operator API's rules.
func (p *Panel) handleCreateChannel(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	req := admin.ChannelRequest{Type: r.PostFormValue("type"), Name: strings.TrimSpace(r.PostFormValue("name")),
		Config: json.RawMessage(strings.TrimSpace(r.PostFormValue("config"))), Default: r.PostFormValue("default") == "on"}
	form := &channelsView{FormType: req.Type, FormName: req.Name, FormConfig: string(req.Config)}
	if len(req.Config) > 0 && !json.Valid(req.Config) {
		form.Error = "Config must be a JSON object."
		p.showChannels(w, r, http.StatusBadRequest, form)
		return
	}
	created, err := p.o.Admin.CreateChannel(r.Context(), s.AccountID, req)
	if err != nil {
		if msg, ok := refusal(err); ok {
			form.Error = msg
			p.showChannels(w, r, http.StatusBadRequest, form)
			return
		}
		p.unavailable(w, r, err)
		return
	}
	v := &channelsView{Notice: "Channel " + created.Name + " created."}
	var cfg struct {
		Secret string `json:"secret"`
	}
	if json.Unmarshal(created.Config, &cfg) == nil && cfg.Secret != "" && !strings.Contains(string(req.Config), cfg.Secret) {
		v.Secret = cfg.Secret
	}
	p.showChannels(w, r, http.StatusCreated, v)
}

// handleCreateGroup serves POST /groups: a name and a JSON array of
// channels.
func (p *Panel) handleCreateGroup(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	name, chans := strings.TrimSpace(r.PostFormValue("name")), strings.TrimSpace(r.PostFormValue("channels"))
	form := &channelsView{GroupName: name, GroupChannels: chans}
	if chans != "" && !json.Valid([]byte(chans)) {
		form.Error = "Channels must be a JSON array, e.g. [{\"type\":\"slack\",\"config\":{...}}]."
		p.showChannels(w, r, http.StatusBadRequest, form)
		return
	}
	created, err := p.o.Admin.CreateGroup(r.Context(), s.AccountID, name, json.RawMessage(chans))
	if err != nil {
		if msg, ok := refusal(err); ok {
			form.Error = msg
			p.showChannels(w, r, http.StatusBadRequest, form)
			return
		}
		p.unavailable(w, r, err)
		return
	}
	p.showChannels(w, r, http.StatusCreated, &channelsView{Notice: "Notification group " + created.Name + " created."})
}

// handleTestChannel serves POST /channels/{id}/test: a test message goes
// out now through the alert channel's own sender.
func (p *Panel) handleTestChannel(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	err := p.o.Admin.TestChannel(r.Context(), s.AccountID, r.PathValue("id"), scheme+"://"+r.Host+"/")
	var e *admin.Error
	switch {
	case err == nil:
		p.showChannels(w, r, http.StatusOK, &channelsView{Notice: "Test message delivered."})
	case errors.As(err, &e) && e.Status == http.StatusNotFound:
		p.notFound(w, r)
	case errors.As(err, &e):
		p.showChannels(w, r, http.StatusBadGateway, &channelsView{Error: "Test message not delivered: " + e.Message})
	default:
		p.unavailable(w, r, err)
	}
}
