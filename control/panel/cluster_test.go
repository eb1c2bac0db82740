package panel_test

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	"lookout/control/admin"
	"lookout/control/panel"
)

// Signing out ends the session on every node: a copy of the cookie taken
// before is refused by another node of a 3-node cluster as soon as that
// node has applied the sign-out, not only by the browser that cleared it.
func TestSignOutEndsTheSessionOnEveryNode(t *testing.T) {
	var mu sync.Mutex
	admins := map[string]*admin.API{}
	c := clustertest.NewCluster(t, 3, clustertest.Options{
		Serve: func(n *cluster.Node, mux *http.ServeMux) func() {
			st := clustertest.StateOf(n)
			a := admin.New(admin.Options{Cluster: n, State: st, Token: "t", PasswordCost: bcrypt.MinCost})
			a.Register(mux)
			p, err := panel.New(panel.Options{Cluster: n, State: st, Admin: a, Key: testKey})
			if err != nil {
				t.Error(err)
				return func() {}
			}
			p.Register(mux)
			p.Start()
			mu.Lock()
			admins[n.ID()] = a
			mu.Unlock()
			return p.Stop
		},
	})
	leader := c.Leader(10 * time.Second)
	ctx := clustertest.Context(t, 20*time.Second)
	mu.Lock()
	acct, err := admins[leader.ID()].CreateAccount(ctx, admin.AccountRequest{Email: "ops@example.com", Password: "a password"})
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*clustertest.Node
	for _, n := range c.Nodes {
		if err := n.ConsistentRead(ctx); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	signIn, other := nodes[0], nodes[2]

	// Signed in on one node; the cookie works on another.
	b := (&node{t: t, URL: signIn.URL()}).browser()
	b.signIn(account{Email: "ops@example.com", Password: "a password", ID: acct.ID})
	u, _ := url.Parse(signIn.URL())
	copied := b.c.Jar.Cookies(u)
	thief := (&node{t: t, URL: other.URL()}).browser()
	ou, _ := url.Parse(other.URL())
	thief.c.Jar.SetCookies(ou, copied)
	thief.get("/").want(t, http.StatusOK, "ops@example.com")

	// Sign out on the first node.
	if p := b.post("/logout", nil); p.Status != http.StatusSeeOther || p.Location != "/login" {
		t.Fatalf("sign out: %d %q %s", p.Status, p.Location, p.Body)
	}
	// The other node refuses the copy once it has applied the sign-out.
	if err := other.ConsistentRead(ctx); err != nil {
		t.Fatal(err)
	}
	if p := thief.get("/"); p.Status != http.StatusSeeOther || p.Location != "/login?next=%2F" {
		t.Fatalf("a copied cookie after sign-out on %s: %d %q", other.ID(), p.Status, p.Location)
	}
	// And so does the node that signed out, for a copy sent there.
	again := (&node{t: t, URL: signIn.URL()}).browser()
	again.c.Jar.SetCookies(u, copied)
	if p := again.get("/"); p.Status != http.StatusSeeOther {
		t.Fatalf("a copied cookie after sign-out on %s: %d", signIn.ID(), p.Status)
	}
	// Signing in again makes a new session, which works.
	b.signIn(account{Email: "ops@example.com", Password: "a password"})
}
