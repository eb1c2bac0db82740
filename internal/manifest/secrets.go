package manifest

import (
	"maps"
	"sort"
	"strings"
)

// Mask is how a secret is shown: by the Management API (GET, list,
// export, apply reports), the CLI's export and the panel. It is one fixed
// string, which says nothing of the secret (not even its length or last
// characters). Sent back where a secret is stored, it means "unchanged":
// Resolve keeps the stored secret.
const Mask = "********"

// The secrets of a check: the values of secret headers, the password of
// basic_auth, and client_key. A client certificate is not one: a server
// sees it at every handshake.
var secretHeaderWords = []string{"auth", "token", "secret", "key", "password", "passwd", "cookie", "session", "signature", "credential"}

// SecretHeader reports whether the value of header name is a secret:
// Authorization, Proxy-Authorization, Cookie, and any name containing
// auth, token, secret, key, password, passwd, cookie, session, signature
// or credential, in any case (X-Api-Key, X-Auth-Token ...).
func SecretHeader(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range secretHeaderWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// Masked returns m with every secret that is set replaced by Mask: what
// is shown of a stored manifest. Empty secrets stay empty.
func Masked(m Manifest) Manifest {
	c := &m.Config
	if len(c.Headers) > 0 {
		c.Headers = maps.Clone(c.Headers)
		for name, v := range c.Headers {
			if SecretHeader(name) && v != "" {
				c.Headers[name] = Mask
			}
		}
	}
	if c.BasicAuth != nil {
		a := *c.BasicAuth
		if a.Password != "" {
			a.Password = Mask
		}
		c.BasicAuth = &a
	}
	if c.ClientKey != "" {
		c.ClientKey = Mask
	}
	return m
}

// restoreSecrets puts the stored secrets of stored into in where in has
// Mask for them: a secret header of the same name, the password of
// basic_auth, client_key. A Mask with nothing stored to restore stays (and
// CheckSecrets reports it).
func restoreSecrets(stored, in Manifest) Manifest {
	if stored.Kind != in.Kind {
		return in
	}
	s, c := stored.Config, &in.Config
	for name, v := range c.Headers {
		if old, ok := s.Headers[name]; ok && v == Mask && SecretHeader(name) {
			c.Headers[name] = old
		}
	}
	if c.BasicAuth != nil && c.BasicAuth.Password == Mask && s.BasicAuth != nil && s.BasicAuth.Password != "" {
		c.BasicAuth.Password = s.BasicAuth.Password
	}
	if c.ClientKey == Mask && s.ClientKey != "" {
		c.ClientKey = s.ClientKey
	}
	return in
}

// CheckSecrets reports the secrets of a resolved manifest (see Resolve)
// that are still Mask, so there was no stored secret to keep
// (secret_masked: send the secret itself), and a restored client_key that
// does not fit a changed client_cert (client_cert_invalid). A write calls
// it after Resolve and before storing.
func CheckSecrets(m Manifest) Errors {
	var errs Errors
	c := m.Config
	names := make([]string, 0, len(c.Headers))
	for name := range c.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if c.Headers[name] == Mask && SecretHeader(name) {
			errs = append(errs, masked("config.headers", "the header "+name))
		}
	}
	if c.BasicAuth != nil && c.BasicAuth.Password == Mask {
		errs = append(errs, masked("config.basic_auth.password", "basic_auth.password"))
	}
	switch {
	case c.ClientKey == Mask:
		errs = append(errs, masked("config.client_key", "client_key"))
	case c.ClientKey != "" && c.ClientCert != "":
		if why := keyPairProblem(c.ClientCert, c.ClientKey); why != "" {
			errs = append(errs, Error{Field: "config.client_cert", Code: CodeClientCertInvalid,
				Message: "config.client_cert does not fit the stored client_key: " + why})
		}
	}
	return errs
}

func masked(field, what string) Error {
	return Error{Field: field, Code: CodeSecretMasked,
		Message: field + " is " + Mask + ", the masked form of a secret, but no secret is stored for " + what + " to keep: send the secret itself"}
}
