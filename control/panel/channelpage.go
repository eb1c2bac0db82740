package panel

import (
	"errors"
	"net/http"
	"time"

	"lookout/control/admin"
)

// A channel's page (/channels/{id}): its settings in the form of its type,
// its delivery history, a test send, and delete after typing its name.

// deliveryRow is one delivery of the channel's history as shown.
type deliveryRow struct {
	At, LastAttempt             time.Time
	Alert, MonitorUUID, Monitor string
	Status, Colour, Error       string
	Attempts                    int64
}

// deliveryColours are the pill colours of the delivery statuses.
var deliveryColours = map[string]string{"delivered": "green", "retrying": "amber", "failed": "red", "given_up": "gray"}

// handleChannel serves GET /channels/{id}.
func (p *Panel) handleChannel(w http.ResponseWriter, r *http.Request) {
	p.showChannel(w, r, http.StatusOK, &channelsView{})
}

// showChannel renders the channel's page; v.Form, when set, is what was
// typed (else the channel as stored, its secret masked).
func (p *Panel) showChannel(w http.ResponseWriter, r *http.Request, status int, v *channelsView) {
	s := sessionFrom(r.Context())
	v.Stale = p.refresh(r)
	id := r.PathValue("id")
	c, err := p.o.Admin.GetChannel(s.AccountID, id)
	if p.readFailed(w, r, err) {
		return
	}
	v.Channel = c
	if v.Form == nil {
		v.Form = newChannelForm(p.o.Admin.ChannelTypes(), "/channels/"+id, "Save channel")
		v.Form.fill(c)
	}
	history, err := p.o.Admin.ChannelDeliveries(s.AccountID, id)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	for _, d := range history {
		v.Deliveries = append(v.Deliveries, deliveryRow{
			At: d.OccurredAt, LastAttempt: d.LastAttemptAt, Alert: d.AlertType, MonitorUUID: d.Monitor.UUID, Monitor: d.Monitor.Name,
			Status: d.Status, Colour: deliveryColours[d.Status], Error: d.Error, Attempts: d.Attempts,
		})
	}
	p.renderChannels(w, r, status, "channel", c.Name, v)
}

// handleUpdateChannel serves POST /channels/{id}: the channel's type, name,
// settings and default, checked by the operator API's rules. A masked
// secret left as shown keeps the stored one.
func (p *Panel) handleUpdateChannel(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	id := r.PathValue("id")
	form := newChannelForm(p.o.Admin.ChannelTypes(), "/channels/"+id, "Save channel")
	form.read(r)
	req, err := form.request()
	if err == nil {
		var updated *admin.Channel
		if updated, err = p.o.Admin.UpdateChannel(r.Context(), s.AccountID, id, req); err == nil {
			p.showChannel(w, r, http.StatusOK, &channelsView{Notice: "Channel " + updated.Name + " saved.", Secret: madeSecret(req.Config, updated.Config)})
			return
		}
	}
	var e *admin.Error
	if errors.As(err, &e) && e.Status == http.StatusNotFound {
		p.notFound(w, r)
		return
	}
	if form.refuse(err) {
		p.showChannel(w, r, http.StatusBadRequest, &channelsView{Form: form, Error: "The channel was not saved: see the fields marked below."})
		return
	}
	p.unavailable(w, r, err)
}

// handleDeleteChannel serves POST /channels/{id}/delete: the channel is
// deleted when confirm_name is its name and no group names it; otherwise
// its page says why (422, or 409 with the group).
func (p *Panel) handleDeleteChannel(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	c, err := p.o.Admin.GetChannel(s.AccountID, r.PathValue("id"))
	if p.readFailed(w, r, err) {
		return
	}
	if r.PostFormValue("confirm_name") != c.Name {
		p.showChannel(w, r, http.StatusUnprocessableEntity, &channelsView{DeleteError: "To delete, type the channel's name, " + c.Name + ", exactly."})
		return
	}
	err = p.o.Admin.DeleteChannel(r.Context(), s.AccountID, c.ID)
	var e *admin.Error
	switch {
	case err == nil:
		http.Redirect(w, r, "/channels?deleted="+urlQueryEscape(c.Name), http.StatusSeeOther)
	case errors.As(err, &e) && e.Status == http.StatusNotFound:
		p.notFound(w, r)
	case errors.As(err, &e) && e.Status == http.StatusConflict:
		p.showChannel(w, r, http.StatusConflict, &channelsView{DeleteError: "Not deleted: " + e.Message + "."})
	default:
		p.unavailable(w, r, err)
	}
}
