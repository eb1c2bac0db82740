package channel

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// ChatWebhook makes the Factory of a chat receiver configured by
// {"webhook_url", "api_url"?} that takes one JSON POST per alert (Slack,
// Discord, Teams): build turns an alert into the receiver's message, and
// errors are prefixed with typ.
func ChatWebhook(typ string, build func(Alert) any) Factory {
	return func(raw json.RawMessage, deps Deps) (Channel, error) {
		var c struct {
			WebhookURL string `json:"webhook_url"`
			APIURL     string `json:"api_url"`
		}
		if err := DecodeConfig(raw, &c); err != nil {
			return nil, err
		}
		addr, err := Endpoint("webhook_url", c.WebhookURL, c.APIURL)
		if err != nil {
			return nil, err
		}
		return &chatSender{typ: typ, addr: addr, client: Client(deps.HTTP), build: build}, nil
	}
}

type chatSender struct {
	typ    string
	addr   string
	client *http.Client
	build  func(Alert) any
}

// Send posts the alert's message to the webhook.
func (s *chatSender) Send(ctx context.Context, a Alert) error {
	if err := PostJSON(ctx, s.client, s.addr, s.build(a), nil); err != nil {
		return fmt.Errorf("%s: %w", s.typ, err)
	}
	return nil
}
