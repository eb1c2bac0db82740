// Package audit is who makes a change, as the account's audit log records
// it. Each API layer puts the actor of a request in its context, from how
// the request was authenticated (the Management API: its key; the operator
// API: the operator; the panel: the signed-in user), and stamps it on
// every command it proposes (Stamp), so the actor travels with the command
// through raft. The state machine writes the entries, in the same
// transaction as the change (control/state, audit.go).
//
// The operator API's and the Management API's Go calls that the panel
// makes carry the panel's context, so a change made in the panel is the
// user's, not the operator's or a key's.
package audit

import (
	"context"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

type ctxKey struct{}

// WithActor returns ctx carrying a as the actor of the changes made with
// it.
func WithActor(ctx context.Context, a *raftv1.Actor) context.Context {
	return context.WithValue(ctx, ctxKey{}, a)
}

// ActorFrom returns the actor ctx carries (nil: none).
func ActorFrom(ctx context.Context) *raftv1.Actor {
	a, _ := ctx.Value(ctxKey{}).(*raftv1.Actor)
	return a
}

// Stamp sets cmd's actor to the one ctx carries, unless cmd has one or ctx
// has none, and returns cmd.
func Stamp(ctx context.Context, cmd *raftv1.Command) *raftv1.Command {
	if cmd.GetActor() == nil {
		if a := ActorFrom(ctx); a != nil {
			cmd.Actor = a
		}
	}
	return cmd
}

// Key is the actor of a request authenticated by key: its id and name
// (never its hash).
func Key(k *raftv1.Key) *raftv1.Actor {
	return &raftv1.Actor{Type: state.ActorKey, Id: k.GetId(), Name: k.GetName()}
}

// Operator is the actor of the operator API (one operator token).
func Operator() *raftv1.Actor {
	return &raftv1.Actor{Type: state.ActorOperator, Name: state.ActorOperator}
}

// User is the actor of a panel user: their id and e-mail.
func User(id, email string) *raftv1.Actor {
	return &raftv1.Actor{Type: state.ActorUser, Id: id, Name: email}
}
