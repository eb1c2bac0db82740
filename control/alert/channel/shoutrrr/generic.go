package shoutrrr

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/nicholas-fedor/shoutrrr/pkg/services/specialized/generic"
	"github.com/nicholas-fedor/shoutrrr/pkg/types"
)

// sendGeneric sends message as shoutrrr's generic service would, with
// client: the generic service posts with http.DefaultClient, which no
// option replaces, so the library builds the request (the webhook
// address, method, content type, the @header query options and the body
// of its template, with the $extra options) and Lookout sends it.
func sendGeneric(svc types.Service, client *http.Client, message string) error {
	s := svc.(*generic.Service)
	cfg := *s.Config
	body, err := s.GetPayload(&cfg, types.Params{cfg.MessageKey: message})
	if err != nil {
		return err
	}
	// The recorder's context replaces this one.
	req, err := http.NewRequestWithContext(context.Background(), cfg.RequestMethod, cfg.WebhookURL().String(), body)
	if err != nil {
		return fmt.Errorf("request: %w", unwrapURL(err))
	}
	contentType := cfg.ContentType
	if cfg.Template == "" {
		contentType = "text/plain"
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", contentType)
	// The service URL the config makes again holds the headers under
	// their normalized names.
	for key, values := range cfg.GetURL().Query() {
		if name, ok := strings.CutPrefix(key, string(generic.HeaderPrefixChar)); ok && name != "" && len(values) > 0 {
			req.Header.Set(name, values[0])
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}
