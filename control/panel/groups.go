package panel

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"lookout/control/admin"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// A notification group in the panel is a name and the account's alert
// channels it sends to, ticked in a list. A group made through the
// operator API may also hold channels of its own (with their configs);
// the form lists them to keep or drop.

// groupChoice is one box of the group form.
type groupChoice struct {
	// Value is a channel id, or the index of a channel of the group's own.
	Value, Label string
	Checked      bool
}

// groupForm is the form of a group.
type groupForm struct {
	Action, Submit, CSRF string
	Name                 string
	// Channels are the account's alert channels; Own the group's
	// channels of its own (edit only).
	Channels, Own []groupChoice
	// Errors are the refusals by field ("name"; "" for the whole form).
	Errors map[string]string
	// checked are the channel ids ticked, before choices lists them.
	checked []string
}

// choices lists the account's channels as boxes, ticked when the form
// names them.
func (f *groupForm) choices(channels []channelRow, checked []string) {
	if checked == nil {
		checked = f.checked
	}
	f.Channels = nil
	for _, c := range channels {
		f.Channels = append(f.Channels, groupChoice{Value: c.ID, Label: c.Name + " (" + c.Type + ")", Checked: slices.Contains(checked, c.ID)})
	}
}

// storedChannel is one channel object of a group as stored.
type storedChannel struct {
	Type      string  `json:"type"`
	Name      *string `json:"name"`
	ChannelID string  `json:"channel_id"`
	raw       json.RawMessage
}

// label names c for people: an alert channel by its name (names maps ids
// to names), a channel of the group's own by its name and type.
func (c storedChannel) label(names map[string]string) string {
	switch {
	case c.ChannelID != "" && names[c.ChannelID] != "":
		return names[c.ChannelID]
	case c.ChannelID != "":
		return "a deleted channel"
	case c.Name != nil && *c.Name != "":
		return *c.Name + " (" + c.Type + ", in the group)"
	}
	return c.Type + " (in the group)"
}

// storedGroupChannels reads g's channels (none when they cannot be read).
func storedGroupChannels(g *statev1.NotificationGroup) []storedChannel {
	var items []json.RawMessage
	if json.Unmarshal(g.GetChannelsJson(), &items) != nil {
		return nil
	}
	out := make([]storedChannel, 0, len(items))
	for _, item := range items {
		var c storedChannel
		if json.Unmarshal(item, &c) == nil {
			c.raw = item
			out = append(out, c)
		}
	}
	return out
}

// groupChannels is the channels array of a group: the stored channels
// that the form keeps (alert channels ticked, own channels kept), in their
// order, then the alert channels newly ticked.
func groupChannels(stored []storedChannel, ticked, keep []string) (json.RawMessage, error) {
	items := []json.RawMessage{}
	seen := map[string]bool{}
	for i, c := range stored {
		switch {
		case c.ChannelID != "" && slices.Contains(ticked, c.ChannelID) && !seen[c.ChannelID]:
			seen[c.ChannelID] = true
			items = append(items, c.raw)
		case c.ChannelID == "" && slices.Contains(keep, strconv.Itoa(i)):
			items = append(items, c.raw)
		}
	}
	for _, id := range ticked {
		if !seen[id] {
			seen[id] = true
			ref, err := json.Marshal(map[string]string{"channel_id": id})
			if err != nil {
				return nil, err
			}
			items = append(items, ref)
		}
	}
	return json.Marshal(items)
}

// refuse puts the operator API's refusal err in f and reports whether it
// was one.
func (f *groupForm) refuse(err error) bool {
	path, reason, msg, ok := fieldRefusal(err)
	if !ok {
		return false
	}
	if path == "name" {
		f.Errors["name"] = reason
	} else {
		f.Errors[""] = msg
	}
	return true
}

// handleCreateGroup serves POST /groups: a name and the alert channels
// ticked.
func (p *Panel) handleCreateGroup(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	if err := r.ParseForm(); err != nil {
		p.errorPage(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	form := &groupForm{Name: strings.TrimSpace(r.PostFormValue("name")), checked: r.PostForm["channel"], Errors: map[string]string{}}
	channels, err := groupChannels(nil, form.checked, nil)
	if err == nil {
		var created *admin.GroupCreated
		if created, err = p.o.Admin.CreateGroup(r.Context(), s.AccountID, form.Name, channels); err == nil {
			p.showChannels(w, r, http.StatusCreated, &channelsView{Notice: "Notification group " + created.Name + " created."})
			return
		}
	}
	if form.refuse(err) {
		p.showChannels(w, r, http.StatusBadRequest, &channelsView{GroupForm: form, Error: "The group was not saved: see the form below."})
		return
	}
	p.unavailable(w, r, err)
}

// handleGroup serves GET /groups/{id}: a group's page, to change or
// delete it.
func (p *Panel) handleGroup(w http.ResponseWriter, r *http.Request) {
	p.showGroup(w, r, http.StatusOK, &channelsView{}, nil)
}

// showGroup renders the group's page; form is what was typed (nil: the
// group as stored).
func (p *Panel) showGroup(w http.ResponseWriter, r *http.Request, status int, v *channelsView, form *groupForm) {
	s := sessionFrom(r.Context())
	v.Stale = p.refresh(r)
	g, err := p.o.State.NotificationGroup(s.AccountID, r.PathValue("id"))
	if p.readFailed(w, r, err) {
		return
	}
	if err := p.listChannels(s.AccountID, v); err != nil {
		p.internal(w, r, err)
		return
	}
	names := map[string]string{}
	for _, c := range v.Channels {
		names[c.ID] = c.Name + " (" + c.Type + ")"
	}
	row := groupRowOf(g, names)
	v.Group = &row
	stored := storedGroupChannels(g)
	fresh := form == nil // the group as stored, not a form sent back
	if fresh {
		form = &groupForm{Name: g.GetName(), Errors: map[string]string{}}
		for _, c := range stored {
			if c.ChannelID != "" {
				form.checked = append(form.checked, c.ChannelID)
			}
		}
	}
	form.choices(v.Channels, nil)
	form.Own = nil
	keep := r.PostForm["keep"]
	for i, c := range stored {
		if c.ChannelID == "" {
			form.Own = append(form.Own, groupChoice{Value: strconv.Itoa(i), Label: c.label(nil), Checked: fresh || slices.Contains(keep, strconv.Itoa(i))})
		}
	}
	form.Action, form.Submit = "/groups/"+g.GetId(), "Save group"
	v.GroupForm = form
	p.renderChannels(w, r, status, "group", g.GetName(), v)
}

// handleUpdateGroup serves POST /groups/{id}: the group's new name, the
// alert channels ticked, and its channels of its own kept.
func (p *Panel) handleUpdateGroup(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	if err := r.ParseForm(); err != nil {
		p.errorPage(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	g, err := p.o.State.NotificationGroup(s.AccountID, r.PathValue("id"))
	if p.readFailed(w, r, err) {
		return
	}
	form := &groupForm{Name: strings.TrimSpace(r.PostFormValue("name")), checked: r.PostForm["channel"], Errors: map[string]string{}}
	channels, err := groupChannels(storedGroupChannels(g), form.checked, r.PostForm["keep"])
	if err == nil {
		var updated *admin.Group
		if updated, err = p.o.Admin.UpdateGroup(r.Context(), s.AccountID, g.GetId(), form.Name, channels); err == nil {
			p.showGroup(w, r, http.StatusOK, &channelsView{Notice: "Notification group " + updated.Name + " saved."}, nil)
			return
		}
	}
	var e *admin.Error
	if errors.As(err, &e) && e.Status == http.StatusNotFound {
		p.notFound(w, r)
		return
	}
	if form.refuse(err) {
		p.showGroup(w, r, http.StatusBadRequest, &channelsView{}, form)
		return
	}
	p.unavailable(w, r, err)
}

// handleDeleteGroup serves POST /groups/{id}/delete: the group is deleted
// when confirm_name is its name and no monitor names it; otherwise its
// page says why (422, or 409 with the monitor that names it).
func (p *Panel) handleDeleteGroup(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	g, err := p.o.State.NotificationGroup(s.AccountID, r.PathValue("id"))
	if p.readFailed(w, r, err) {
		return
	}
	if r.PostFormValue("confirm_name") != g.GetName() {
		p.showGroup(w, r, http.StatusUnprocessableEntity, &channelsView{DeleteError: "To delete, type the group's name, " + g.GetName() + ", exactly."}, nil)
		return
	}
	err = p.o.Admin.DeleteGroup(r.Context(), s.AccountID, g.GetId())
	var e *admin.Error
	switch {
	case err == nil:
		http.Redirect(w, r, "/channels?deleted="+urlQueryEscape(g.GetName()), http.StatusSeeOther)
	case errors.As(err, &e) && e.Status == http.StatusNotFound:
		p.notFound(w, r)
	case errors.As(err, &e) && e.Status == http.StatusConflict:
		p.showGroup(w, r, http.StatusConflict, &channelsView{DeleteError: "Not deleted: " + e.Message + "."}, nil)
	default:
		p.unavailable(w, r, err)
	}
}
