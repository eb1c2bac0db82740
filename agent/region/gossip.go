package region

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
)

// The pool's gossip: started with the region's key, the key changed,
// joins, and the end.

// SetKey gives the pool the region's gossip key and this agent's token
// id, as the control plane's stream names them. The first key starts the
// gossip (and the joins); a new key becomes the one the pool sends with,
// the previous one still opening what others send until they have the new
// one too (the cluster secret was changed). A new token id is gossiped to
// the others. A region of one only records the token id.
func (p *Pool) SetKey(key []byte, tokenID string) error {
	if len(key) == 0 {
		return errors.New("region: the gossip key is empty")
	}
	p.startMu.Lock()
	defer p.startMu.Unlock()
	if p.stopped {
		return nil
	}
	tokenChanged := p.setToken(tokenID)
	if p.nt == nil {
		return nil
	}
	if p.ml == nil {
		return p.start(key)
	}
	if !bytes.Equal(p.keyring.GetPrimaryKey(), key) {
		if err := p.rotate(key); err != nil {
			return err
		}
		p.o.Logger.Info("the region's gossip key changed; gossiping with the new one")
	}
	if tokenChanged {
		if err := p.ml.UpdateNode(2 * time.Second); err != nil {
			p.o.Logger.Warn("telling the region of this agent's new token", "error", err)
		}
	}
	return nil
}

// State returns GossipOff, GossipWaitingForKey or GossipOn.
func (p *Pool) State() string {
	switch {
	case p.nt == nil:
		return GossipOff
	case !p.gossiping.Load():
		return GossipWaitingForKey
	}
	return GossipOn
}

// setToken records this agent's token id; it reports whether it changed
// (startMu held).
func (p *Pool) setToken(tokenID string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if tokenID == "" || tokenID == p.token {
		return false
	}
	p.token = tokenID
	self := p.live[p.o.ID]
	self.TokenID = tokenID
	p.live[p.o.ID] = self
	p.members = sortedMembers(p.live)
	return true
}

// start stops the draining and starts memberlist with key (startMu held).
func (p *Pool) start(key []byte) error {
	keyring, err := memberlist.NewKeyring(nil, key)
	if err != nil {
		return fmt.Errorf("region: the gossip key: %w", err)
	}
	p.stopDrain()
	host, _, _ := net.SplitHostPort(p.o.GossipAddr)
	c := Tuned()
	c.Name = p.o.ID
	c.BindAddr, c.BindPort = host, p.nt.GetAutoBindPort()
	if c.BindAddr == "" {
		c.BindAddr = "0.0.0.0"
	}
	c.AdvertisePort = c.BindPort
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		c.AdvertiseAddr = host
	}
	c.Transport = p.nt
	c.Keyring = keyring
	c.Logger = p.o.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	c.Delegate = meta{p}
	c.Events = &events{p: p}
	if p.o.Config != nil {
		p.o.Config(c)
	}
	ml, err := memberlist.Create(c)
	if err != nil {
		p.startDrain()
		return fmt.Errorf("gossip on %s: %w", p.o.GossipAddr, err)
	}
	p.ml, p.keyring = ml, keyring
	p.gossiping.Store(true)
	p.o.Logger.Info("gossiping with the region's key", "addr", p.Addr())
	if len(p.o.Join) > 0 {
		// Joining may wait on addresses that do not answer: not here.
		p.wg.Go(func() {
			p.join()
			p.rejoin()
		})
	}
	return nil
}

// rotate makes key the one the pool sends with, keeping only the previous
// one beside it (startMu held).
func (p *Pool) rotate(key []byte) error {
	prev := p.keyring.GetPrimaryKey()
	if err := p.keyring.AddKey(key); err != nil {
		return fmt.Errorf("region: the gossip key: %w", err)
	}
	if err := p.keyring.UseKey(key); err != nil {
		return fmt.Errorf("region: the gossip key: %w", err)
	}
	for _, k := range p.keyring.GetKeys() {
		if !bytes.Equal(k, key) && !bytes.Equal(k, prev) {
			if err := p.keyring.RemoveKey(k); err != nil {
				return fmt.Errorf("region: drop an old gossip key: %w", err)
			}
		}
	}
	return nil
}

// startDrain drops what reaches the gossip address until stopDrain
// (startMu held, or before the pool is shared).
func (p *Pool) startDrain() {
	stop, end := make(chan struct{}), make(chan struct{})
	p.drained, p.drainEnd = stop, end
	go func() {
		defer close(end)
		for {
			select {
			case <-stop:
				return
			case <-p.nt.PacketCh():
			case conn := <-p.nt.StreamCh():
				conn.Close()
			}
		}
	}()
}

// stopDrain stops the draining and waits for it (startMu held).
func (p *Pool) stopDrain() {
	close(p.drained)
	<-p.drainEnd
}

// join tries the join addresses once.
func (p *Pool) join() {
	n, err := p.ml.Join(p.o.Join)
	if err != nil && n == 0 {
		p.o.Logger.Warn("no agent of the region answered; running alone for now and trying again", "join", p.o.Join, "error", err)
		return
	}
	p.o.Logger.Info("joined the region's agents", "contacted", n, "members", p.ml.NumMembers())
}

// rejoin tries to join again while this agent is alone.
func (p *Pool) rejoin() {
	t := time.NewTicker(p.o.RejoinInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			if p.ml.NumMembers() <= 1 {
				p.join()
			}
		}
	}
}

// Close leaves the region (the others take this agent's checks at once)
// and stops gossiping.
func (p *Pool) Close() error {
	return p.shutdown(true)
}

func (p *Pool) shutdown(leave bool) error {
	if p.nt == nil {
		return nil
	}
	var err error
	p.once.Do(func() {
		p.startMu.Lock()
		defer p.startMu.Unlock()
		p.stopped = true
		close(p.stop)
		p.wg.Wait()
		if p.ml == nil {
			p.stopDrain()
			err = p.nt.Shutdown()
			return
		}
		if leave {
			if err := p.ml.Leave(2 * time.Second); err != nil {
				p.o.Logger.Warn("leaving the region", "error", err)
			}
		}
		err = p.ml.Shutdown()
	})
	return err
}

// Kill stops gossiping without leaving, as a crash would (tests).
func (p *Pool) Kill() error { return p.shutdown(false) }
