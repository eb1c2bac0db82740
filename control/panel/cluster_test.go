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

// Removing a user ends the user's sessions on every node: a session signed
// in on one node, and a copy of its cookie on another, are both refused
// once those nodes have applied the removal, which an owner made in the
// panel of a third node.
func TestARemovedUsersSessionsEndOnEveryNode(t *testing.T) {
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
	a := admins[leader.ID()]
	mu.Unlock()
	acct, err := a.CreateAccount(ctx, admin.AccountRequest{Email: "owner@example.com", Password: "owner password"})
	if err != nil {
		t.Fatal(err)
	}
	ed, err := a.AddUser(ctx, acct.ID, admin.UserRequest{Email: "ed@example.com", Role: "editor", Password: "editor password"})
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
	signIn, other, ownerNode := nodes[0], nodes[2], nodes[1]

	// The editor signs in on one node; a copy of the cookie works on
	// another.
	b := (&node{t: t, URL: signIn.URL()}).browser()
	b.signIn(account{Email: "ed@example.com", Password: "editor password"})
	u, _ := url.Parse(signIn.URL())
	copied := (&node{t: t, URL: other.URL()}).browser()
	ou, _ := url.Parse(other.URL())
	copied.c.Jar.SetCookies(ou, b.c.Jar.Cookies(u))
	copied.get("/").want(t, http.StatusOK, "ed@example.com")

	// An owner removes the editor in the panel of the third node.
	owner := (&node{t: t, URL: ownerNode.URL()}).browser()
	owner.signIn(account{Email: "owner@example.com", Password: "owner password"})
	owner.get("/users")
	if p := owner.post("/users/"+ed.ID+"/remove", url.Values{"confirm": {"yes"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("remove: %d %s", p.Status, p.Body)
	}

	// Both nodes refuse the editor's session once they have applied it.
	for _, tc := range []struct {
		n *clustertest.Node
		b *browser
	}{{other, copied}, {signIn, b}} {
		if err := tc.n.ConsistentRead(ctx); err != nil {
			t.Fatal(err)
		}
		if p := tc.b.get("/"); p.Status != http.StatusSeeOther || p.Location != "/login?next=%2F" {
			t.Fatalf("the removed user's session on %s: %d %q", tc.n.ID(), p.Status, p.Location)
		}
		tc.b.post("/channels", url.Values{"name": {"x"}}).want(t, http.StatusUnauthorized)
	}
	// And the editor cannot sign in again.
	b.get("/login")
	b.post("/login", url.Values{"email": {"ed@example.com"}, "password": {"editor password"}}).want(t, http.StatusUnauthorized)
}
