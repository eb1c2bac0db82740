package admin

import (
	"net/http"
	"time"
)

// Delivery is one alert's delivery to a channel, as the channel's history
// shows it.
type Delivery struct {
	AlertID    string    `json:"alert_id"`
	AlertType  string    `json:"alert_type"`
	OccurredAt time.Time `json:"occurred_at"`
	Monitor    struct {
		UUID string `json:"uuid,omitempty"`
		Name string `json:"name"`
	} `json:"monitor"`
	// Status is retrying, delivered, failed (refused for good) or
	// given_up (the retry time ran out, or the channel changed).
	Status        string    `json:"status"`
	Error         string    `json:"error,omitempty"`
	Attempts      int64     `json:"attempts"`
	LastAttemptAt time.Time `json:"last_attempt_at"`
}

// handleChannelDeliveries serves GET
// /admin/v1/accounts/{id}/channels/{channel_id}/deliveries.
func (a *API) handleChannelDeliveries(w http.ResponseWriter, r *http.Request) {
	if err := a.readable(r, r.PathValue("id")); err != nil {
		a.fail(w, r, err)
		return
	}
	list, err := a.ChannelDeliveries(r.PathValue("id"), r.PathValue("channel_id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Deliveries []Delivery `json:"deliveries"`
	}{list})
}

// ChannelDeliveries is the delivery history of a channel of the account,
// newest alert first (at most state.MaxChannelHistory); an unknown channel
// is an *Error (404).
func (a *API) ChannelDeliveries(accountID, channelID string) ([]Delivery, error) {
	if _, err := a.storedChannel(accountID, channelID); err != nil {
		return nil, err
	}
	records, err := a.state.ChannelHistory(accountID, channelID)
	if err != nil {
		return nil, err
	}
	out := make([]Delivery, 0, len(records))
	for _, rec := range records {
		d := Delivery{
			AlertID: rec.GetAlertId(), AlertType: rec.GetAlertType(), OccurredAt: time.UnixMilli(rec.GetOccurredUnixMs()).UTC(),
			Status: rec.GetStatus(), Error: rec.GetError(), Attempts: rec.GetAttempts(), LastAttemptAt: time.UnixMilli(rec.GetLastAttemptUnixMs()).UTC(),
		}
		d.Monitor.UUID, d.Monitor.Name = rec.GetMonitorUuid(), rec.GetMonitorName()
		out = append(out, d)
	}
	return out, nil
}
