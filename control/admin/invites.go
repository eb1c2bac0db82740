package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"lookout/control/state"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Invitations are made by an account's owners in the panel, through these
// calls: a link with a secret (iv_...) that is shown once, for one e-mail
// and role, valid state.InviteTTLMillis, used once.

// Invite is a pending invitation, never its secret.
type Invite struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	InvitedBy string `json:"invited_by"`
	CreatedAt string `json:"created_at"`
	ExpiresAt string `json:"expires_at"`
}

// InviteCreated is a new invitation with its secret, shown only here.
type InviteCreated struct {
	Invite
	Token string `json:"token"`
}

// utcSeconds is ms as RFC 3339 UTC, to the second.
func utcSeconds(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

func inviteFromProto(inv *statev1.Invite) Invite {
	return Invite{ID: inv.GetId(), Email: inv.GetEmail(), Role: inv.GetRole(), InvitedBy: inv.GetInvitedBy(),
		CreatedAt: utcSeconds(inv.GetCreatedUnixMs()), ExpiresAt: utcSeconds(inv.GetExpiresUnixMs())}
}

// CreateInvite invites email to the account with role, on behalf of the
// user invitedBy. An e-mail that has a user is a 409 user_exists; a newer
// invite for the same e-mail replaces the older one.
func (a *API) CreateInvite(ctx context.Context, accountID, invitedBy, email, role string) (*InviteCreated, error) {
	email = strings.TrimSpace(email)
	if err := checkEmail(email); err != nil {
		return nil, err
	}
	if err := checkRole("role", role); err != nil {
		return nil, err
	}
	token, hash, err := apikey.New(apikey.Invite)
	if err != nil {
		return nil, err
	}
	now := a.now()
	inv := &raftv1.CreateInvite{AccountId: accountID, InviteId: uuid.NewString(), TokenHash: hash, Email: email, Role: role,
		ExpiresUnixMs: now.UnixMilli() + state.InviteTTLMillis, InvitedBy: invitedBy}
	cmd := &raftv1.Command{Op: &raftv1.Command_CreateInvite{CreateInvite: inv}}
	if err := checkCommand(cmd, "the invite"); err != nil {
		return nil, err
	}
	if err := a.apply(ctx, cmd); err != nil {
		return nil, err
	}
	return &InviteCreated{Token: token, Invite: Invite{ID: inv.InviteId, Email: email, Role: role, InvitedBy: invitedBy,
		CreatedAt: now.UTC().Format(time.RFC3339), ExpiresAt: utcSeconds(inv.ExpiresUnixMs)}}, nil
}

// Invites lists the account's invitations that have not expired, oldest
// first, from this node's copy.
func (a *API) Invites(accountID string) ([]Invite, error) {
	list, err := a.state.Invites(accountID)
	if err != nil {
		return nil, fmt.Errorf("read invites of %s: %w", accountID, err)
	}
	now := a.now().UnixMilli()
	out := []Invite{}
	for _, inv := range list {
		if now < inv.GetExpiresUnixMs() {
			out = append(out, inviteFromProto(inv))
		}
	}
	return out, nil
}

// RevokeInvite deletes an invitation: its link stops working.
func (a *API) RevokeInvite(ctx context.Context, accountID, inviteID string) error {
	cmd := &raftv1.Command{Op: &raftv1.Command_RevokeInvite{RevokeInvite: &raftv1.RevokeInvite{AccountId: accountID, InviteId: inviteID}}}
	if err := checkCommand(cmd, "the invite id"); err != nil {
		return err
	}
	return a.apply(ctx, cmd)
}

// The codes of a refused invitation link.
const (
	// CodeInviteNotFound (404): no such link, or one used, revoked or
	// replaced.
	CodeInviteNotFound = "invite_not_found"
	// CodeInviteExpired (409): the link's time ran out.
	CodeInviteExpired = state.CodeInviteExpired
	// CodeInviteMismatch (409): the link is for another e-mail.
	CodeInviteMismatch = state.CodeInviteMismatch
)

// InviteByToken returns the pending invitation of a link's secret: 404
// invite_not_found when there is none (never made, used, revoked or
// replaced), 409 invite_expired when its time ran out.
func (a *API) InviteByToken(token string) (*Invite, *statev1.Invite, error) {
	inv, err := a.state.InviteByToken(apikey.Hash(token))
	if errors.Is(err, state.ErrNotFound) {
		return nil, nil, &Error{Status: http.StatusNotFound, Code: CodeInviteNotFound, Message: "no such invite: it was used, revoked or replaced"}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read invite: %w", err)
	}
	if a.now().UnixMilli() >= inv.GetExpiresUnixMs() {
		return nil, nil, &Error{Status: http.StatusConflict, Code: CodeInviteExpired, Message: "the invite expired: ask an owner of the account for a new one"}
	}
	v := inviteFromProto(inv)
	return &v, inv, nil
}

// AcceptInvite turns the invitation of a link's secret into a user and
// returns it. email is who accepts it: "" for the invite's own (the link
// is proof enough), or the e-mail that single sign-on verified, which must
// be the invite's (409 invite_mismatch). password is the new user's (""
// for a user of single sign-on only).
func (a *API) AcceptInvite(ctx context.Context, token, email, password string) (*statev1.User, error) {
	_, inv, err := a.InviteByToken(token)
	if err != nil {
		return nil, err
	}
	if email == "" {
		email = inv.GetEmail()
	}
	if !strings.EqualFold(email, inv.GetEmail()) {
		return nil, &Error{Status: http.StatusConflict, Code: CodeInviteMismatch, Message: "the invite is for another e-mail address"}
	}
	var hash []byte
	if password != "" {
		if hash, err = a.hashPassword(password); err != nil {
			return nil, err
		}
	}
	u := &statev1.User{Id: uuid.NewString(), AccountId: inv.GetAccountId(), Email: inv.GetEmail(), Role: inv.GetRole(),
		PasswordHash: hash, CreatedUnixMs: a.now().UnixMilli()}
	cmd := &raftv1.Command{Op: &raftv1.Command_AcceptInvite{AcceptInvite: &raftv1.AcceptInvite{
		TokenHash: inv.GetTokenHash(), AccountId: u.AccountId, Email: email, UserId: u.Id, PasswordHash: hash}}}
	if err := checkCommand(cmd, "the invite"); err != nil {
		return nil, err
	}
	if err := a.apply(ctx, cmd); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status == http.StatusNotFound {
			e.Code = CodeInviteNotFound
		}
		return nil, err
	}
	return u, nil
}
