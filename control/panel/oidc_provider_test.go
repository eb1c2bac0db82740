package panel_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/coreos/go-oidc/v3/oidc/oidctest"
)

// oidcProvider is a small OpenID Connect provider on loopback: a discovery
// document, its signing key (a real RSA key made for the test) as a JWKS,
// an authorization endpoint that signs in whoever the test says at once,
// and a token endpoint that checks the client, the code (once) and the
// PKCE verifier against the challenge before it hands out an RS256 ID
// token. The fields below are what the next sign-in's ID token says.
type oidcProvider struct {
	t            testing.TB
	URL          string
	clientID     string
	clientSecret string
	key          *rsa.PrivateKey

	mu sync.Mutex
	// Email and Verified are the token's email and email_verified.
	Email    string
	Verified any
	// Audience replaces the client id as aud; Nonce the flow's nonce;
	// Expires the token's lifetime (negative: already expired).
	Audience, Nonce string
	Expires         time.Duration
	codes           map[string]grant
	// pkceChecked counts token requests whose verifier matched.
	pkceChecked int
}

type grant struct{ nonce, challenge, redirect string }

func newOIDCProvider(t testing.TB) *oidcProvider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &oidcProvider{t: t, clientID: "lookout-panel", clientSecret: "s3cret", key: key, codes: map[string]grant{},
		Verified: true, Expires: 5 * time.Minute}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// signInAs sets who the provider signs in next, with a verified e-mail
// and a good token.
func (p *oidcProvider) signInAs(email string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Email, p.Verified, p.Audience, p.Nonce, p.Expires = email, true, "", "", 5*time.Minute
}

func (p *oidcProvider) set(f func(p *oidcProvider)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (p *oidcProvider) discovery(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{
		"issuer": p.URL, "authorization_endpoint": p.URL + "/authorize", "token_endpoint": p.URL + "/token",
		"jwks_uri": p.URL + "/jwks", "response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"}, "code_challenge_methods_supported": []string{"S256"},
	})
}

func (p *oidcProvider) jwks(w http.ResponseWriter, r *http.Request) {
	b64 := base64.RawURLEncoding.EncodeToString
	writeJSON(w, 200, map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": "test-key", "use": "sig", "alg": "RS256",
		"n": b64(p.key.N.Bytes()), "e": b64(big.NewInt(int64(p.key.E)).Bytes()),
	}}})
}

// authorize signs the configured person in at once and sends the browser
// back with a code.
func (p *oidcProvider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != p.clientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("state") == "" {
		http.Error(w, "bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
		return
	}
	code := rand.Text()
	p.mu.Lock()
	p.codes[code] = grant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	p.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token checks the client, the code (once), the redirect URL and the PKCE
// verifier, and answers the ID token.
func (p *oidcProvider) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	if id != p.clientID || secret != p.clientSecret {
		writeJSON(w, 401, map[string]string{"error": "invalid_client"})
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	g, ok := p.codes[r.PostFormValue("code")]
	delete(p.codes, r.PostFormValue("code"))
	sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
	switch {
	case r.PostFormValue("grant_type") != "authorization_code" || !ok || r.PostFormValue("redirect_uri") != g.redirect:
		writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
		return
	case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier does not match"})
		return
	}
	p.pkceChecked++
	aud, nonce := p.clientID, g.nonce
	if p.Audience != "" {
		aud = p.Audience
	}
	if p.Nonce != "" {
		nonce = p.Nonce
	}
	now := time.Now()
	claims, _ := json.Marshal(map[string]any{
		"iss": p.URL, "sub": "subject-" + p.Email, "aud": aud, "iat": now.Unix(), "exp": now.Add(p.Expires).Unix(),
		"nonce": nonce, "email": p.Email, "email_verified": p.Verified,
	})
	writeJSON(w, 200, map[string]any{"access_token": "at-" + rand.Text(), "token_type": "Bearer", "expires_in": 300,
		"id_token": oidctest.SignIDToken(p.key, "test-key", oidc.RS256, string(claims))})
}
