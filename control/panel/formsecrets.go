package panel

import (
	"fmt"

	"lookout/internal/manifest"
)

// A copy of a monitor does not take its secrets (the values of secret
// headers, the basic auth password, the client key). The form of a copy
// could only show their masks, and a mask stands for a stored secret: the
// new monitor has none, so the Management API would refuse it
// (secret_masked). Instead the copy's form leaves those inputs empty
// (a secret header keeps its name, with no value), with a note under each
// field to enter the secret again; what the form shows is what is saved.

// copyWithoutSecrets is m (masked, as the API shows it) with each secret
// emptied, and the notes of the fields that held one, by key.
func copyWithoutSecrets(m manifest.Manifest) (manifest.Manifest, map[string]string) {
	c := &m.Config
	var keys []string
	for name, v := range c.Headers {
		if v == manifest.Mask && manifest.SecretHeader(name) {
			c.Headers[name] = ""
			keys = append(keys, "config.headers")
		}
	}
	if c.BasicAuth != nil && c.BasicAuth.Password == manifest.Mask {
		c.BasicAuth.Password = ""
		keys = append(keys, "config.basic_auth")
	}
	if c.ClientKey == manifest.Mask {
		c.ClientKey = ""
		keys = append(keys, "config.client_key")
	}
	notes := map[string]string{}
	for _, f := range fieldsOf(m.Kind) {
		for _, k := range keys {
			if f.Key == k && f.CopyNote != "" {
				notes[k] = fmt.Sprintf(copyNote, f.CopyNote)
			}
		}
	}
	return m, notes
}
