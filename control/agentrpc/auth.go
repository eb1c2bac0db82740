package agentrpc

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"connectrpc.com/connect"

	"lookout/control/keyauth"
	"lookout/control/state"
	"lookout/internal/apikey"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/httpserver"
)

// errUnauthenticated is the answer to a missing, unknown or revoked token.
var errUnauthenticated = errors.New("agent token missing, unknown or revoked: send Authorization: Bearer at_...")

// authenticate returns the agent token of the call's Authorization header
// and its hash. A hash this node does not hold is looked up again after a
// consistent read (shared between concurrent misses), so a token created a
// moment ago on the leader is not refused by a follower that lags.
func (s *Service) authenticate(ctx context.Context, h http.Header) (*statev1.AgentToken, []byte, error) {
	token, ok := bearer(h)
	if !ok || !strings.HasPrefix(token, "at_") {
		return nil, nil, connect.NewError(connect.CodeUnauthenticated, errUnauthenticated)
	}
	hash := apikey.Hash(token)
	t, err := s.state.AgentTokenByHash(hash)
	if errors.Is(err, state.ErrNotFound) {
		if err := s.catchUp.Wait(ctx); err != nil {
			return nil, nil, connect.NewError(connect.CodeUnavailable, err)
		}
		t, err = s.state.AgentTokenByHash(hash)
	}
	switch {
	case errors.Is(err, state.ErrNotFound):
		return nil, nil, connect.NewError(connect.CodeUnauthenticated, errUnauthenticated)
	case err != nil:
		s.log.Error("read agent token", "error", err)
		return nil, nil, connect.NewError(connect.CodeInternal, errors.New("cannot read the state"))
	}
	httpserver.MarkRPC(ctx) // an agent's connection: outside the public connection cap
	return t, hash, nil
}

// stillValid tells whether the token with hash is still in this node's
// state. The stream found it before, so a miss is a revocation (the state
// only moves forward): no consistent read.
func (s *Service) stillValid(hash []byte) error {
	_, err := s.state.AgentTokenByHash(hash)
	switch {
	case errors.Is(err, state.ErrNotFound):
		return connect.NewError(connect.CodeUnauthenticated, errors.New("agent token revoked"))
	case err != nil:
		s.log.Error("read agent token", "error", err)
		return connect.NewError(connect.CodeUnavailable, errors.New("cannot read the state"))
	}
	return nil
}

// bearer reads "Authorization: Bearer <token>" (keyauth.BearerToken's
// rules).
func bearer(h http.Header) (string, bool) {
	token, present, err := keyauth.BearerToken(&http.Request{Header: h})
	return token, present && err == nil && token != ""
}
