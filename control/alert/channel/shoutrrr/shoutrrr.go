// Package shoutrrr delivers alerts through the shoutrrr library
// (github.com/nicholas-fedor/shoutrrr, the maintained fork), whose
// service URLs reach push and chat services Lookout has no channel of
// its own for.
//
// Config: {"url": "ntfy://ntfy.example.com/alerts", "api_url": "..."}.
// url is the service URL as shoutrrr documents it; it usually holds a
// token, so it is the config's secret (Secret). It is parsed by the
// library when the channel is saved: an unknown scheme or a URL the
// service does not accept is a config error naming url. api_url is
// accepted like every channel type takes it, and ignored: the service
// URL names its host itself.
//
// The message is the alert's one-line summary and, on a second line, the
// link to the monitor in the panel. Titles, priorities, tags and the like
// are the URL's to set (each service's query options).
//
// Only the services the library lets Lookout give its own HTTP client
// are supported, because that client's dialer is what refuses loopback,
// private and link-local addresses (internal/netguard): a service that
// dials with http.DefaultClient or a transport of its own would reach
// addresses no other channel may. Those are ntfy, gotify, mattermost,
// rocketchat and pushover, whose requests the library makes, and generic,
// whose request the library builds (address, method, headers, body) and
// Lookout sends. The others (matrix, zulip, googlechat, telegram, slack,
// teams, smtp, logger ...) are refused when the channel is saved; Lookout
// has channels of its own for several of them. Certificates are always
// verified, whatever the URL says.
package shoutrrr

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/mattermost"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/rocketchat"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/push/gotify"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/push/ntfy"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/push/pushover"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/specialized/generic"
	"github.com/nicholas-fedor/shoutrrr/pkg/types"

	"lookout/control/alert/channel"
)

// Type is the channel type in channel objects.
const Type = "shoutrrr"

// Secret is the config field that holds a secret: the service URL, with
// its token.
const Secret = "url"

// gotifyDefaultTitle is the title the gotify service gives a message
// whose URL sets none; Lookout's messages say "Lookout" instead.
const gotifyDefaultTitle = "Shoutrrr notification"

// maxURL bounds the service URL, in bytes.
const maxURL = 4096

type config struct {
	URL string `json:"url"`
	// APIURL is accepted for uniformity with the other types, and
	// ignored.
	APIURL string `json:"api_url"`
}

// service is one supported shoutrrr service.
type service struct {
	new func() types.Service
	// use makes svc, initialized, send with client.
	use func(svc types.Service, client *http.Client)
	// check, when set, refuses what the service would only refuse when
	// sending.
	check func(svc types.Service) error
	// send, when set, sends instead of the service: for services whose
	// client cannot be replaced but whose request the library builds.
	send func(svc types.Service, client *http.Client, message string) error
}

// services are the supported schemes.
var services = map[string]service{
	ntfy.Scheme: {
		new: func() types.Service { return &ntfy.Service{} },
		use: func(s types.Service, c *http.Client) { s.(*ntfy.Service).SetHTTPClient(c) },
	},
	gotify.Scheme: {
		new: func() types.Service { return &gotify.Service{} },
		use: func(s types.Service, c *http.Client) {
			g := s.(*gotify.Service)
			// The library's JSON client shares this *http.Client.
			*g.GetHTTPClient() = *c
			if g.Config.Title == gotifyDefaultTitle {
				g.Config.Title = "Lookout"
			}
		},
		check: func(s types.Service) error {
			if !(&gotify.DefaultValidator{}).ValidateToken(s.(*gotify.Service).Config.Token) {
				return fmt.Errorf("the gotify token must be 15 characters starting with A")
			}
			return nil
		},
	},
	mattermost.Scheme: {
		new: func() types.Service { return &mattermost.Service{} },
		use: func(s types.Service, c *http.Client) { *s.(*mattermost.Service).GetHTTPClient() = *c },
	},
	rocketchat.Scheme: {
		new: func() types.Service { return &rocketchat.Service{} },
		use: func(s types.Service, c *http.Client) { s.(*rocketchat.Service).Client = c },
	},
	pushover.Scheme: {
		new: func() types.Service { return &pushover.Service{} },
		use: func(s types.Service, c *http.Client) { s.(*pushover.Service).Client = c },
	},
	generic.Scheme: {
		new:  func() types.Service { return &generic.Service{} },
		send: sendGeneric,
	},
}

// Schemes lists the supported service schemes, sorted.
func Schemes() []string { return slices.Sorted(maps.Keys(services)) }

// Channel sends to one shoutrrr service URL.
type Channel struct {
	scheme string
	url    *url.URL
	client *http.Client
}

// New makes a shoutrrr channel from its config; it is a channel.Factory.
func New(raw json.RawMessage, deps channel.Deps) (channel.Channel, error) {
	var cfg config
	if err := channel.DecodeConfig(raw, &cfg); err != nil {
		return nil, err
	}
	if cfg.URL == "" {
		return nil, channel.FieldError("url", "is required")
	}
	if len(cfg.URL) > maxURL {
		return nil, channel.FieldError("url", "must be at most %d bytes", maxURL)
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return nil, channel.FieldError("url", "must be a shoutrrr service URL, such as ntfy://ntfy.sh/topic")
	}
	scheme, _, _ := strings.Cut(strings.ToLower(u.Scheme), "+")
	if _, ok := services[scheme]; !ok {
		return nil, channel.FieldError("url", "service %q is not supported; supported: %s", scheme, strings.Join(Schemes(), ", "))
	}
	c := &Channel{scheme: scheme, url: u, client: channel.Client(deps.HTTP)}
	svc, err := c.service()
	if err != nil {
		return nil, channel.FieldError("url", "%s", redact(err.Error(), u))
	}
	if check := services[scheme].check; check != nil {
		if err := check(svc); err != nil {
			return nil, channel.FieldError("url", "%v", err)
		}
	}
	return c, nil
}

// service returns a new service, initialized from the channel's URL.
// Each send gets one of its own: services keep state between calls.
func (c *Channel) service() (types.Service, error) {
	svc := services[c.scheme].new()
	u := *c.url
	configURL := &u
	if !strings.EqualFold(u.Scheme, c.scheme) {
		// scheme+address: a custom URL (generic+https://...), which the
		// service turns into its own form, as shoutrrr's router does.
		custom, ok := svc.(types.CustomURLService)
		if !ok {
			return nil, fmt.Errorf("%s takes no %s+ URL", c.scheme, c.scheme)
		}
		var err error
		if configURL, err = custom.GetConfigURLFromCustom(configURL); err != nil {
			return nil, err
		}
	}
	if err := svc.Initialize(configURL, log.New(io.Discard, "", 0)); err != nil {
		return nil, err
	}
	return svc, nil
}

// redact removes the parts of u that may be secret (user info, path
// segments, query values, fragment) from s, a library error that might
// quote them.
func redact(s string, u *url.URL) string {
	var secrets []string
	if u.User != nil {
		secrets = append(secrets, u.User.Username())
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p)
		}
	}
	secrets = append(secrets, strings.Split(u.Path, "/")...)
	for _, vs := range u.Query() {
		secrets = append(secrets, vs...)
	}
	secrets = append(secrets, u.Fragment, u.RawQuery)
	// Longest first, so a secret that holds another goes whole.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, secret := range secrets {
		if len(secret) >= 3 {
			s = strings.ReplaceAll(s, secret, "…")
		}
	}
	return s
}
