package cli

import (
	"flag"
	"net/http"
	"net/url"
	"strings"
	"time"

	"lookout/control/panel"
)

// oidcFlags are the --oidc-* flags of lookout control: sign-in to the
// panel with the company's OpenID Connect provider.
type oidcFlags struct {
	issuer, clientID, clientSecret string
	domains                        listFlag
}

func defineOIDC(fs *flag.FlagSet) *oidcFlags {
	o := &oidcFlags{}
	fs.StringVar(&o.issuer, "oidc-issuer", "", "OpenID Connect issuer URL (its /.well-known/openid-configuration is read at the first sign-in): adds \"Sign in with SSO\" to the panel; needs --public-url, --oidc-client-id and --oidc-client-secret. The provider must send people back to <public-url>/login/sso/callback")
	fs.StringVar(&o.clientID, "oidc-client-id", "", "the panel's client id at the OpenID Connect provider")
	fs.StringVar(&o.clientSecret, "oidc-client-secret", "", "the panel's client secret at the OpenID Connect provider (env LOOKOUT_OIDC_CLIENT_SECRET keeps it off the command line)")
	fs.Var(&o.domains, "oidc-allowed-domains", "e-mail domains that may sign in with SSO, comma-separated (default: any whose e-mail has a user)")
	return o
}

// check refuses an incomplete or unusable set of --oidc-* flags.
func (o *oidcFlags) check(publicURL string) error {
	if o.issuer == "" {
		if o.clientID != "" || o.clientSecret != "" || len(o.domains) > 0 {
			return usageError{"--oidc-client-id, --oidc-client-secret and --oidc-allowed-domains need --oidc-issuer"}
		}
		return nil
	}
	if u, err := url.Parse(o.issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return usageError{"--oidc-issuer must be an http(s) URL such as https://login.example.com/realms/acme"}
	}
	if o.clientID == "" || o.clientSecret == "" {
		return usageError{"--oidc-issuer needs --oidc-client-id and --oidc-client-secret"}
	}
	if publicURL == "" {
		return usageError{"--oidc-issuer needs --public-url: the provider sends people back to <public-url>/login/sso/callback"}
	}
	for _, d := range o.domains {
		if d = strings.TrimPrefix(d, "@"); d == "" || strings.ContainsAny(d, "@/ ") {
			return usageError{"--oidc-allowed-domains takes domains such as example.com,corp.example.org"}
		}
	}
	return nil
}

// options is the panel's SSO configuration, nil without --oidc-issuer.
func (o *oidcFlags) options() *panel.SSOOptions {
	if o.issuer == "" {
		return nil
	}
	return &panel.SSOOptions{Issuer: o.issuer, ClientID: o.clientID, ClientSecret: o.clientSecret,
		AllowedDomains: append([]string(nil), o.domains...), HTTPClient: &http.Client{Timeout: 10 * time.Second}}
}
