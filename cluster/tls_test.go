package cluster_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	"lookout/internal/gen/lookout/cluster/v1/clusterv1connect"
	"lookout/internal/tlsconf"
	"lookout/internal/tlsconf/tlstest"
)

// tlsCluster starts n nodes whose node-to-node traffic is mutual TLS;
// certsOf gives node i its certificate.
func tlsCluster(t *testing.T, n int, certsOf func(i int) *tlsconf.Certs) *clustertest.Cluster {
	certs := map[int]*tlsconf.Certs{}
	get := func(i int) *tlsconf.Certs {
		if certs[i] == nil {
			certs[i] = certsOf(i)
		}
		return certs[i]
	}
	return clustertest.NewCluster(t, n, clustertest.Options{
		Tune: func(i int, o *cluster.Options) {
			o.ClientTLS, o.PeerTLS = get(i).ClientConfig(), get(i).PeerServerConfig()
		},
		ServerTLS: func(i int) *tls.Config { return get(i).ServerConfig() },
	})
}

func TestMutualTLSClusterElectsAndForwards(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster CA")
	c := tlsCluster(t, 3, func(i int) *tlsconf.Certs { return ca.Certs(t, "node") })
	f := c.Follower()
	id := uuid.NewString()
	mustApply(t, f, createAccount(id)) // forwarded over https with client certs
	for _, n := range c.Nodes {
		requireAccounts(t, n, []string{id}) // ReadIndex over the same RPC
	}

	// Without a client certificate, the raft port refuses the handshake
	// and the RPC path refuses the request, though both trust the CA.
	pool, err := tlsconf.LoadPool(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	leader := c.Leader(5 * time.Second)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", leader.RaftAddr(), &tls.Config{RootCAs: pool})
	if err == nil {
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1)) // TLS 1.3: the refusal arrives after the handshake
		conn.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("raft without a client certificate: %v, want a certificate error", err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, err := hc.Post(leader.URL()+"/"+clusterv1connect.ClusterServiceName+"/Status", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("rpc without a client certificate: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "client certificate required") {
		t.Fatalf("rpc without a client certificate: %d %q, want 401 client certificate required", res.StatusCode, body)
	}
}

func TestNodeWithCertFromAnotherCAIsRefused(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "cluster CA")
	other := tlstest.NewCA(t, "another CA")
	rogue := other.Certs(t, "rogue")
	c := tlsCluster(t, 3, func(i int) *tlsconf.Certs {
		if i == 3 {
			return rogue
		}
		return ca.Certs(t, "node")
	})
	leader := c.Leader(5 * time.Second)

	// The cluster refuses its certificate on the raft port and the HTTP
	// listener alike.
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", leader.RaftAddr(), rogue.ClientConfig())
	if err == nil {
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		conn.Close()
	}
	if err == nil {
		t.Fatal("raft handshake with a certificate from another CA succeeded")
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: rogue.ClientConfig()}}
	if res, err := hc.Get(leader.URL() + "/"); err == nil {
		res.Body.Close()
		t.Fatalf("https with a certificate from another CA answered %d", res.StatusCode)
	}

	// Joined through gossip, the rogue node never hears from a leader and
	// cannot forward a write.
	r := c.Add("rogue")
	id := uuid.NewString()
	mustApply(t, leader, createAccount(id))
	_, err = r.Apply(clustertest.Context(t, 20*time.Second), createAccount(uuid.NewString()))
	if err == nil {
		t.Fatal("write through the rogue node succeeded")
	}
	if !errors.Is(err, cluster.ErrNoLeader) {
		t.Logf("rogue write: %v", err)
	}
	if _, err := r.State().Account(id); err == nil {
		t.Fatal("the rogue node received the replicated state")
	}
}
