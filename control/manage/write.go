package manage

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
)

// The writes of POST and PUT /api/v1/monitors as Go calls: the web panel's
// forms make and change monitors through them, so that a monitor made in
// the panel is exactly one made through the API (the same validation, the
// same codes, the same raft command).

// Invalid is a manifest a write refused: what validation found, or the
// state's refusal (a name taken, the plan's limit reached), with the
// summary the API answers with.
type Invalid struct {
	Summary string
	Errors  manifest.Errors
}

func (e *Invalid) Error() string { return e.Summary }

// ManifestOf is the manifest of a stored monitor, with its uuid, as GET
// /api/v1/monitors/{uuid} shows it (secrets masked, without the read-only
// status).
func ManifestOf(m *statev1.Monitor) manifest.Manifest { return toManifest(m) }

// CreateMonitor validates raw as POST /api/v1/monitors does and creates
// the monitor in the account; the manifest it returns holds the secrets
// (manifest.Masked before showing it). The error is an *Invalid for a
// manifest the API would answer 422, else the cluster's (no leader ...).
func (a *API) CreateMonitor(ctx context.Context, accountID string, raw json.RawMessage) (manifest.Manifest, error) {
	m, errs := manifest.Parse(raw, a.manifestOptions(accountID))
	if len(errs) > 0 {
		return manifest.Manifest{}, &Invalid{Summary: "the manifest is invalid", Errors: errs}
	}
	m = manifest.Resolve(manifest.Manifest{}, m)
	if errs := manifest.CheckSecrets(m); len(errs) > 0 { // a mask with no secret to keep
		return manifest.Manifest{}, &Invalid{Summary: "the manifest is invalid", Errors: errs}
	}
	m.UUID = uuid.NewString()
	if err := a.checkDependencies(ctx, accountID, m); err != nil {
		return manifest.Manifest{}, err
	}
	res, err := a.cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{
		AccountId: accountID, Creates: []*raftv1.MonitorSpec{toSpec(m, false)},
	}}})
	if err != nil {
		return manifest.Manifest{}, err
	}
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		return manifest.Manifest{}, refusal(res)
	}
	return m, nil
}

// ReplaceMonitor validates raw as PUT /api/v1/monitors/{uuid} does and
// replaces the account's monitor id with it wholesale (omitting
// display_name clears it, omitting notification_group detaches it,
// omitting project leaves it). The error is state.ErrNotFound for a
// monitor the account does not have, an *Invalid for a manifest the API
// would answer 422, else the cluster's.
func (a *API) ReplaceMonitor(ctx context.Context, accountID, id string, raw json.RawMessage) (manifest.Manifest, error) {
	stored, err := a.state.Monitor(accountID, id)
	if err != nil {
		return manifest.Manifest{}, err
	}
	m, errs := manifest.Parse(raw, a.manifestOptions(accountID))
	if len(errs) == 0 && m.Kind != stored.GetKind() {
		errs = append(errs, manifest.Error{Field: "kind", Code: manifest.CodeKindMismatch, Message: "kind cannot change: the monitor is a " + stored.GetKind()})
	} else if len(errs) == 0 && m.Kind == manifest.KindPing && m.Name != stored.GetName() {
		errs = append(errs, manifest.Error{Field: "name", Code: manifest.CodeNameImmutable, Message: "the name of a ping monitor cannot change"})
	}
	if len(errs) > 0 {
		return manifest.Manifest{}, &Invalid{Summary: "the manifest is invalid", Errors: errs}
	}
	// Against the stored secrets, not their masks: a mask sent back keeps
	// the secret it stands for.
	resolved := manifest.Resolve(storedManifest(stored), m)
	if errs := manifest.CheckSecrets(resolved); len(errs) > 0 {
		return manifest.Manifest{}, &Invalid{Summary: "the manifest is invalid", Errors: errs}
	}
	if err := a.checkDependencies(ctx, accountID, resolved); err != nil {
		return manifest.Manifest{}, err
	}
	res, err := a.cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{
		AccountId: accountID, Updates: []*raftv1.MonitorSpec{toSpec(resolved, m.Project == nil)},
	}}})
	if err != nil {
		return manifest.Manifest{}, err
	}
	switch res.GetStatus() {
	case raftv1.Status_STATUS_OK:
		return resolved, nil
	case raftv1.Status_STATUS_NOT_FOUND:
		return manifest.Manifest{}, state.ErrNotFound
	}
	return manifest.Manifest{}, refusal(res)
}

// refusal is the *Invalid of a PutMonitors of one manifest that the state
// machine refused, its problem under the field it is about.
func refusal(res *raftv1.Result) *Invalid {
	code := res.GetCode()
	if code == "" {
		code = "invalid"
	}
	field := ""
	switch code {
	case manifest.CodeNameAlreadyExists, manifest.CodeNameTakenByOtherKind, manifest.CodeNameImmutable:
		field = "name"
	case manifest.CodeNotificationGroupInvalid:
		field = "notification_group"
	case manifest.CodeKindMismatch:
		field = "kind"
	}
	return &Invalid{Summary: res.GetMessage(), Errors: manifest.Errors{{Field: field, Code: code, Message: res.GetMessage()}}}
}

// writeFailure answers a CreateMonitor or ReplaceMonitor of monitor id
// that failed with err.
func (a *API) writeFailure(w http.ResponseWriter, id string, err error) {
	var inv *Invalid
	switch {
	case errors.As(err, &inv):
		writeInvalid(w, inv.Errors.Body(inv.Summary))
	case isNotFound(err):
		notFound(w, id)
	case a.unavailable(w, err):
	default:
		a.internal(w, err)
	}
}
