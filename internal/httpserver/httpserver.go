// Package httpserver is the HTTP server of a control node: HTTP/1.1 and
// cleartext HTTP/2 (h2c, prior knowledge) on one listener, or HTTPS
// (HTTP/1.1 and HTTP/2 negotiated by ALPN) when given a TLS config, with timeouts
// that drop clients which connect and then say nothing or stop answering,
// and a cap on open connections.
package httpserver

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// The defaults (each Options field documents its own).
const (
	DefaultMaxConnections       = 10_000
	DefaultReadHeaderTimeout    = 10 * time.Second
	DefaultReadTimeout          = time.Minute
	DefaultIdleTimeout          = 2 * time.Minute
	DefaultMaxConcurrentStreams = 250
	DefaultSendPingTimeout      = 30 * time.Second
	DefaultPingTimeout          = 15 * time.Second
	DefaultWriteByteTimeout     = 30 * time.Second
)

// Options configures the server; a zero field takes its default.
type Options struct {
	// MaxConnections caps the open connections (HTTP/1 and HTTP/2 alike,
	// node-to-node RPC included). Connections beyond it wait in the
	// kernel's listen backlog until one closes; they are not refused.
	MaxConnections int
	// ReadHeaderTimeout bounds the time from accepting a connection to
	// having read a request's headers, and so also the time a client has
	// to send the HTTP/2 preface; a client that sends nothing (or half a
	// preface) is disconnected after it. It applies again to each request
	// of a kept-alive HTTP/1 connection.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole HTTP/1 request, body included.
	// Writes are not bounded: an answer may wait seconds for a leader.
	ReadTimeout time.Duration
	// IdleTimeout closes a connection with no request in progress after
	// this long: a kept-alive HTTP/1 connection, or an HTTP/2 one with no
	// open stream (also one that sent its preface and nothing since).
	IdleTimeout time.Duration
	// MaxConcurrentStreams bounds the open streams of one HTTP/2
	// connection.
	MaxConcurrentStreams int
	// SendPingTimeout: an HTTP/2 connection that sent no frame for this
	// long is pinged, and closed when the answer does not come within
	// PingTimeout; so a peer that vanished with streams open does not
	// hold them forever.
	SendPingTimeout time.Duration
	PingTimeout     time.Duration
	// WriteByteTimeout closes an HTTP/2 connection to which nothing could
	// be written for this long while data was waiting (a client that
	// stopped reading).
	WriteByteTimeout time.Duration
	// TLS, when set, makes the server serve HTTPS (HTTP/1.1 and HTTP/2)
	// instead of HTTP/1.1 and h2c. It must give a certificate
	// (GetCertificate, so a reloaded one is served). The TLS handshake is
	// bounded by ReadHeaderTimeout.
	TLS *tls.Config
}

func (o *Options) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxConcurrentStreams <= 0 {
		o.MaxConcurrentStreams = DefaultMaxConcurrentStreams
	}
	set(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&o.ReadTimeout, DefaultReadTimeout)
	set(&o.IdleTimeout, DefaultIdleTimeout)
	set(&o.SendPingTimeout, DefaultSendPingTimeout)
	set(&o.PingTimeout, DefaultPingTimeout)
	set(&o.WriteByteTimeout, DefaultWriteByteTimeout)
}

// Server is an http.Server and the cap it serves its listener with.
type Server struct {
	srv      *http.Server
	maxConns int
}

// New makes the server of handler; Serve it on a listener.
func New(handler http.Handler, o Options) *Server {
	o.defaults()
	srv := &http.Server{
		Handler:           handler,
		Protocols:         new(http.Protocols),
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		IdleTimeout:       o.IdleTimeout,
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams: o.MaxConcurrentStreams,
			SendPingTimeout:      o.SendPingTimeout,
			PingTimeout:          o.PingTimeout,
			WriteByteTimeout:     o.WriteByteTimeout,
		},
	}
	srv.Protocols.SetHTTP1(true)
	if o.TLS != nil {
		srv.TLSConfig = o.TLS
		srv.Protocols.SetHTTP2(true)
	} else {
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	return &Server{srv: srv, maxConns: o.MaxConnections}
}

// Serve serves ln, at most MaxConnections connections at a time, until
// Shutdown or Close (then it returns http.ErrServerClosed).
func (s *Server) Serve(ln net.Listener) error {
	ln = netutil.LimitListener(ln, s.maxConns)
	if s.srv.TLSConfig != nil {
		return s.srv.ServeTLS(ln, "", "")
	}
	return s.srv.Serve(ln)
}

// Shutdown stops accepting, closes idle connections and waits for the
// active ones to finish, or for ctx to end.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// Close closes the listener and every connection at once.
func (s *Server) Close() error { return s.srv.Close() }
