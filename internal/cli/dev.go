package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"lookout/cluster"
	"lookout/control/admin"
	"lookout/control/audit"
	"lookout/control/state"
	"lookout/internal/apikey"
)

// demoEmail is the login of the account a dev node makes on first start.
const demoEmail = "demo@lookout.local"

type welcome struct {
	base, dataDir, token string
	printToken           bool
	// allowPrivate: checks and channels may reach private addresses.
	allowPrivate bool
}

// devWelcome waits for the dev node to lead, makes the demo account on
// first start, and prints where to go next. Secrets are printed only when
// they were just made: a restart prints none.
func devWelcome(ctx context.Context, node *cluster.Node, st *state.Store, api *admin.API, w welcome, stdout io.Writer) error {
	for !node.IsLeader() {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
	accounts, err := st.Accounts()
	if err != nil {
		return fmt.Errorf("read accounts: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nLookout dev node is up at %s (data in %s).\n", w.base, w.dataDir)
	fmt.Fprintf(&b, "  web panel:       %s/  (sign in as %s)\n", w.base, demoEmail)
	if w.printToken {
		fmt.Fprintf(&b, "  admin token:     %s  (kept in %s)\n", w.token, filepath.Join(w.dataDir, "admin-token"))
	}
	if w.allowPrivate {
		b.WriteString("  private targets: allowed: checks and channels may reach localhost and private networks (--allow-private-targets=false refuses them)\n")
	} else {
		b.WriteString("  private targets: refused: checks and channels may not reach localhost or private networks\n")
	}
	ingestKey, managementKey := "<the ingest key printed on first start>", "<the management key printed on first start>"
	if len(accounts) == 0 {
		password, err := randomSecret("")
		if err != nil {
			return err
		}
		// Made by the operator (the dev node's own), as the audit log says.
		created, err := api.CreateAccount(audit.WithActor(ctx, audit.Operator()), admin.AccountRequest{Email: demoEmail, Password: password})
		if err != nil {
			return fmt.Errorf("create demo account: %w", err)
		}
		fmt.Fprintf(&b, "\nDemo account (shown this once):\n")
		fmt.Fprintf(&b, "  account id:      %s\n", created.ID)
		fmt.Fprintf(&b, "  e-mail:          %s\n  password:        %s\n", created.Email, password)
		fmt.Fprintf(&b, "  ingest key:      %s\n  management key:  %s\n", created.IngestKey, created.ManagementKey)
		ingestKey, managementKey = created.IngestKey, created.ManagementKey
	} else {
		fmt.Fprintf(&b, "  Secrets were shown on first start; the admin token is in %s.\n", filepath.Join(w.dataDir, "admin-token"))
		for _, a := range accounts {
			if a.GetEmail() == demoEmail {
				fmt.Fprintf(&b, "  Lost the demo password? LOOKOUT_ADMIN_TOKEN=$(cat %s) bin/lookout admin --addr %s account password %s --password NEW\n",
					filepath.Join(w.dataDir, "admin-token"), w.base, a.GetId())
			}
		}
	}
	fmt.Fprintf(&b, "\nNext:\n")
	fmt.Fprintf(&b, "  curl %s/health\n", w.base)
	fmt.Fprintf(&b, "  LOOKOUT_ADDR=%s LOOKOUT_INGEST_KEY=%s bin/lookout ping nightly-backup --status complete\n", w.base, ingestKey)
	fmt.Fprintf(&b, "  LOOKOUT_ADDR=%s LOOKOUT_MANAGEMENT_KEY=%s bin/lookout monitors get nightly-backup\n", w.base, managementKey)
	fmt.Fprintf(&b, "  LOOKOUT_ADDR=%s LOOKOUT_ADMIN_TOKEN=$(cat %s) bin/lookout admin cluster\n\n",
		w.base, filepath.Join(w.dataDir, "admin-token"))
	_, err = io.WriteString(stdout, b.String())
	return err
}

// randomSecret is a fresh random secret with prefix (an admin token, a
// demo password); nothing stores its hash.
func randomSecret(prefix string) (string, error) {
	secret, _, err := apikey.New(prefix)
	return secret, err
}
