package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"lookout/control/alert/channel/webhook"
)

// silent is a listener that accepts every connection and never answers,
// holding it until the peer closes it.
type silent struct {
	url string
	ln  net.Listener

	mu    sync.Mutex
	held  int
	conns map[net.Conn]struct{}
}

func startSilent() (*silent, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &silent{url: "http://" + ln.Addr().String() + "/", ln: ln, conns: map[net.Conn]struct{}{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = struct{}{}
			s.held++
			s.mu.Unlock()
			go func() {
				_, _ = io.Copy(io.Discard, c)
				c.Close()
				s.mu.Lock()
				delete(s.conns, c)
				s.held--
				s.mu.Unlock()
			}()
		}
	}()
	return s, nil
}

// connections is the number of connections held now.
func (s *silent) connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

func (s *silent) close() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

// good answers 200 at once: B's check target (GET) and B's webhook
// receiver (POST), which notes when each alert first arrived, with the
// time it occurred.
type good struct {
	url string
	srv *http.Server

	mu       sync.Mutex
	arrivals map[string]arrival // by alert id
}

type arrival struct{ occurred, received time.Time }

func startGood() (*good, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g := &good{url: "http://" + ln.Addr().String() + "/", arrivals: map[string]arrival{}}
	g.srv = &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second}
	go g.srv.Serve(ln)
	return g, nil
}

func (g *good) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	if r.Method == http.MethodPost {
		var p webhook.Payload
		if err := json.NewDecoder(r.Body).Decode(&p); err == nil && p.ID != "" {
			g.mu.Lock()
			if _, seen := g.arrivals[p.ID]; !seen {
				g.arrivals[p.ID] = arrival{occurred: p.OccurredAt, received: at}
			}
			g.mu.Unlock()
		}
	}
	w.Write([]byte("ok\n"))
}

// delays are the delivered alerts' delays from occurrence to arrival.
func (g *good) delays() []time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]time.Duration, 0, len(g.arrivals))
	for _, a := range g.arrivals {
		out = append(out, a.received.Sub(a.occurred))
	}
	return out
}
