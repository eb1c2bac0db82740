package panel

import (
	"errors"
	"net/http"
	"strings"

	"lookout/control/admin"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

type keyRow struct {
	ID, Name, Type string
	Scopes         []string
	// CreatedMs is when the key was made (0: not recorded, keys made
	// before it was); LastUsedMs its last recorded use (0: never), to the
	// hour.
	CreatedMs, LastUsedMs int64
}

type keysView struct {
	baseView
	Keys []keyRow
	// NowMs is the time the page's relative times count from.
	NowMs int64
	// Revoke is the key whose revocation the page asks to confirm.
	Revoke *keyRow
	// Created is the key just made: its secret is shown this once.
	Created *admin.KeyCreated
	Error   string
	// Form is what was typed, kept after a refusal.
	FormType, FormName string
	FormScopes         []string
}

// handleKeys serves GET /keys[?revoke=ID]: the account's keys, without
// secrets, with when each was made and last used; with revoke, the page
// asks to confirm that key's revocation (a form, no script needed).
func (p *Panel) handleKeys(w http.ResponseWriter, r *http.Request) {
	v := &keysView{FormType: "management", FormScopes: []string{"read", "write", "delete"}}
	p.showKeys(w, r, http.StatusOK, v, r.URL.Query().Get("revoke"))
}

// showKeys renders the keys page; revoke, when not empty, is the id of the
// key to confirm the revocation of (404 when the account has none).
func (p *Panel) showKeys(w http.ResponseWriter, r *http.Request, status int, v *keysView, revoke string) {
	s := sessionFrom(r.Context())
	v.Stale = p.refresh(r)
	keys, err := p.o.State.Keys(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	used, err := p.o.State.KeysLastUsed(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	for _, k := range keys {
		row := keyRow{ID: k.GetId(), Name: k.GetName(), Type: "ingest", Scopes: k.GetScopes(),
			CreatedMs: k.GetCreatedUnixMs(), LastUsedMs: used[k.GetId()]}
		if k.GetType() == raftv1.KeyType_KEY_TYPE_MANAGEMENT {
			row.Type = "management"
		}
		v.Keys = append(v.Keys, row)
		if row.ID == revoke {
			v.Revoke = &row
		}
	}
	if revoke != "" && v.Revoke == nil {
		p.notFound(w, r)
		return
	}
	v.NowMs = p.now().UnixMilli()
	v.Title, v.Nav, v.CSRF, v.Account = "Keys", "keys", s.CSRF, s.Email
	p.render(w, r, status, "keys", v)
}

// handleCreateKey serves POST /keys: type, name and (management) scopes.
// The answer shows the secret once; it is not stored anywhere.
func (p *Panel) handleCreateKey(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	r.ParseForm()
	req := admin.KeyRequest{Type: r.PostFormValue("type"), Name: strings.TrimSpace(r.PostFormValue("name"))}
	if req.Type == "management" {
		req.Scopes = append([]string{}, r.PostForm["scope"]...)
	}
	created, err := p.o.Admin.CreateKey(r.Context(), s.AccountID, req)
	if err != nil {
		if msg, ok := refusal(err); ok {
			p.showKeys(w, r, http.StatusBadRequest, &keysView{Error: msg, FormType: req.Type, FormName: req.Name, FormScopes: req.Scopes}, "")
			return
		}
		p.unavailable(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	p.showKeys(w, r, http.StatusCreated, &keysView{Created: created, FormType: "management", FormScopes: []string{"read", "write", "delete"}}, "")
}

// handleRevokeKey serves POST /keys/{id}/revoke: the key is revoked only
// when the form confirms it (confirm=yes, sent by the confirmation that
// GET /keys?revoke=ID shows); without, that confirmation is shown (422).
func (p *Panel) handleRevokeKey(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	if r.PostFormValue("confirm") != "yes" {
		v := &keysView{FormType: "management", FormScopes: []string{"read", "write", "delete"}}
		p.showKeys(w, r, http.StatusUnprocessableEntity, v, r.PathValue("id"))
		return
	}
	if err := p.o.Admin.RevokeKey(r.Context(), s.AccountID, r.PathValue("id")); err != nil {
		var e *admin.Error
		if errors.As(err, &e) && e.Status == http.StatusNotFound {
			p.notFound(w, r)
			return
		}
		if msg, ok := refusal(err); ok {
			p.errorPage(w, r, http.StatusBadRequest, msg)
			return
		}
		p.unavailable(w, r, err)
		return
	}
	http.Redirect(w, r, "/keys", http.StatusSeeOther)
}

// refusal is the message of an operator API refusal (bad input, a
// conflict), to show beside the form; other errors are the cluster's.
func refusal(err error) (string, bool) {
	var e *admin.Error
	if errors.As(err, &e) && e.Status < 500 {
		msg := strings.TrimPrefix(e.Message, "invalid field: ")
		return strings.ToUpper(msg[:1]) + msg[1:], true
	}
	return "", false
}
