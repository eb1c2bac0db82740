package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// Account field bounds.
const (
	maxEmailBytes = 254
	minPassword   = 8  // characters
	maxPassword   = 72 // bytes: bcrypt reads no more
)

// The names of the two keys every account is created with.
const (
	personalIngestKeyName     = "default"
	personalManagementKeyName = "personal"
)

// AccountRequest asks for a new account. Password may be empty (no panel
// login); a nil Plan is the default plan.
type AccountRequest struct {
	Email    string
	Password string
	Plan     *PlanRequest
}

// AccountCreated is a new account with its two personal keys, whose secrets
// are shown only here.
type AccountCreated struct {
	ID            string `json:"id"`
	Email         string `json:"email"`
	Plan          Plan   `json:"plan"`
	IngestKey     string `json:"ingest_key"`
	ManagementKey string `json:"management_key"`
}

// accountBody is the JSON of POST /admin/v1/accounts. The plan stays raw
// so that its errors can name it ("plan.name").
type accountBody struct {
	Email    string          `json:"email"`
	Password *string         `json:"password"`
	Plan     json.RawMessage `json:"plan"`
}

// accountResponse is the answer to GET /admin/v1/accounts/{id}.
type accountResponse struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Plan      Plan   `json:"plan"`
	Usage     usage  `json:"usage"`
	CreatedAt string `json:"created_at"`
}

type usage struct {
	Monitors         int64  `json:"monitors"`
	EventsThisPeriod int64  `json:"events_this_period"`
	PeriodResetsAt   string `json:"period_resets_at"`
}

// handleCreateAccount serves POST /admin/v1/accounts.
func (a *API) handleCreateAccount(w http.ResponseWriter, r *http.Request) {
	var body accountBody
	if err := decodeBody(w, r, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	req := AccountRequest{Email: body.Email}
	if body.Password != nil {
		if *body.Password == "" {
			a.fail(w, r, invalidField("password", "must not be empty; leave it out for an account without one"))
			return
		}
		req.Password = *body.Password
	}
	plan, err := decodePlan(body.Plan, "plan")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	req.Plan = plan
	created, err := a.CreateAccount(r.Context(), req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, created)
}

// CreateAccount validates req and creates the account with its personal
// ingest key (named "default") and its personal full-access management key
// (named "personal"). Invalid requests, a taken e-mail and the like come
// back as *Error; a cluster without a leader as an error wrapping
// cluster.ErrNoLeader.
func (a *API) CreateAccount(ctx context.Context, req AccountRequest) (*AccountCreated, error) {
	if err := checkEmail(req.Email); err != nil {
		return nil, err
	}
	if req.Password != "" {
		if err := checkPassword(req.Password); err != nil {
			return nil, err
		}
	}
	plan, err := req.Plan.resolve("plan")
	if err != nil {
		return nil, err
	}
	var passwordHash []byte
	if req.Password != "" {
		passwordHash, err = bcrypt.GenerateFromPassword([]byte(req.Password), a.pwCost)
		if err != nil {
			return nil, fmt.Errorf("hash password: %w", err)
		}
	}
	id := uuid.NewString()
	ingest, ingestSecret, err := newKey(id, raftv1.KeyType_KEY_TYPE_INGEST, personalIngestKeyName, nil)
	if err != nil {
		return nil, err
	}
	mgmt, mgmtSecret, err := newKey(id, raftv1.KeyType_KEY_TYPE_MANAGEMENT, personalManagementKeyName, allScopes())
	if err != nil {
		return nil, err
	}
	err = a.apply(ctx, &raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId:     id,
		Email:         req.Email,
		PasswordHash:  passwordHash,
		Plan:          plan.proto(),
		IngestKey:     ingest,
		ManagementKey: mgmt,
	}}})
	if err != nil {
		return nil, err
	}
	return &AccountCreated{ID: id, Email: req.Email, Plan: plan, IngestKey: ingestSecret, ManagementKey: mgmtSecret}, nil
}

// checkEmail accepts a bare address (no display name, no angle brackets).
func checkEmail(email string) error {
	if email == "" {
		return invalidField("email", "required")
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Name != "" || addr.Address != email || len(email) > maxEmailBytes {
		return invalidField("email", "must be a plain e-mail address such as ops@example.com")
	}
	return nil
}

// handleGetAccount serves GET /admin/v1/accounts/{id}. The read is
// consistent (it reflects every acknowledged write) unless the query says
// stale=true, which answers from this node's copy even without a leader.
func (a *API) handleGetAccount(w http.ResponseWriter, r *http.Request) {
	if err := a.readConsistency(r); err != nil {
		a.fail(w, r, err)
		return
	}
	id := r.PathValue("id")
	acct, err := a.state.Account(id)
	if errors.Is(err, state.ErrNotFound) {
		a.fail(w, r, &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: "account " + id + " not found"})
		return
	}
	if err != nil {
		a.fail(w, r, fmt.Errorf("read account %s: %w", id, err))
		return
	}
	monitors, events, err := a.state.Usage(id, a.now().UnixMilli())
	if err != nil {
		a.fail(w, r, fmt.Errorf("read usage of %s: %w", id, err))
		return
	}
	writeJSON(w, http.StatusOK, accountResponse{
		ID:    acct.GetId(),
		Email: acct.GetEmail(),
		Plan:  PlanFromProto(acct.GetPlan()),
		// The period is the calendar month in UTC.
		Usage:     usage{Monitors: monitors, EventsThisPeriod: events, PeriodResetsAt: nextMonthUTC(a.now()).Format(time.RFC3339)},
		CreatedAt: createdAt(acct),
	})
}

// nextMonthUTC is the start of the calendar month after t, in UTC.
func nextMonthUTC(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
}
