// Package httpserver is the HTTP server of a control node: HTTP/1.1 and
// cleartext HTTP/2 (h2c, prior knowledge) on one listener, or HTTPS
// (HTTP/1.1 and HTTP/2 negotiated by ALPN, every answer with
// Strict-Transport-Security) when given a TLS config, with timeouts that
// drop clients which connect and then say nothing, stop reading or stop
// answering, and caps on open connections that keep a share for RPC
// (conncap.go).
package httpserver

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"
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
	DefaultWriteTimeout         = time.Minute
	DefaultRPCConnections       = 256
	DefaultProbationTimeout     = 2 * time.Second
	// HSTS is the Strict-Transport-Security of every HTTPS answer: a year.
	HSTS = "max-age=31536000"
)

// Options configures the server; a zero field takes its default.
type Options struct {
	// MaxConnections caps the open public connections (HTTP/1 and HTTP/2
	// alike): those that have not carried authenticated RPC (MarkRPC).
	// Connections beyond it and the reserve wait in the kernel's listen
	// backlog until one closes; see conncap.go for the reserve.
	MaxConnections int
	// RPCPrefixes are the path prefixes of RPC (node-to-node and agent);
	// with none there is no reserve.
	RPCPrefixes []string
	// RPCConnections is the reserve beyond MaxConnections that a new RPC
	// connection can always get while the public share is full.
	RPCConnections int
	// ProbationTimeout is how long a connection accepted into the reserve
	// has to send an RPC request (or, for a public one, to get a public
	// slot) before it is closed or answered 503.
	ProbationTimeout time.Duration
	// ReadHeaderTimeout bounds the time from accepting a connection to
	// having read a request's headers, and so also the time a client has
	// to send the HTTP/2 preface; a client that sends nothing (or half a
	// preface) is disconnected after it. It applies again to each request
	// of a kept-alive HTTP/1 connection.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole HTTP/1 request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end
	// of its answer (an answer may wait seconds for a leader, so it is
	// generous), except the requests of RPCPrefixes and those NoWriteTimeout
	// picks: streams and long transfers, whose stalled readers HTTP/2's
	// WriteByteTimeout and the streams' own checks catch.
	WriteTimeout time.Duration
	// NoWriteTimeout picks the requests WriteTimeout does not apply to
	// (event streams, snapshot transfers, profiles).
	NoWriteTimeout func(*http.Request) bool
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
	if o.RPCConnections <= 0 {
		o.RPCConnections = DefaultRPCConnections
	}
	if len(o.RPCPrefixes) == 0 {
		o.RPCConnections = 0
	}
	if o.NoWriteTimeout == nil {
		o.NoWriteTimeout = func(*http.Request) bool { return false }
	}
	set(&o.WriteTimeout, DefaultWriteTimeout)
	set(&o.ProbationTimeout, DefaultProbationTimeout)
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

// Server is an http.Server and the caps it serves its listener with.
type Server struct {
	srv *http.Server
	o   Options
}

// New makes the server of handler; Serve it on a listener.
func New(handler http.Handler, o Options) *Server {
	o.defaults()
	handler = classify(handler, o.RPCPrefixes)
	handler = writeTimeouts(handler, o)
	if o.TLS != nil {
		handler = strictTransport(handler)
	}
	srv := &http.Server{
		Handler:           handler,
		Protocols:         new(http.Protocols),
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		ConnContext:       connContext,
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
	return &Server{srv: srv, o: o}
}

// Serve serves ln, at most MaxConnections public connections and
// RPCConnections more at a time, until Shutdown or Close (then it returns
// http.ErrServerClosed).
func (s *Server) Serve(ln net.Listener) error {
	ln = newCapListener(ln, s.o.MaxConnections, s.o.RPCConnections, s.o.ProbationTimeout)
	if s.srv.TLSConfig != nil {
		return s.srv.ServeTLS(ln, "", "")
	}
	return s.srv.Serve(ln)
}

// writeTimeouts lifts the server's WriteTimeout from the requests that
// stream or transfer for long.
func writeTimeouts(h http.Handler, o Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isRPC(r, o.RPCPrefixes) || o.NoWriteTimeout(r) {
			_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		}
		h.ServeHTTP(w, r)
	})
}

// strictTransport tells browsers to come back over HTTPS only, on every
// answer (the server serves nothing else).
func strictTransport(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", HSTS)
		h.ServeHTTP(w, r)
	})
}

// Shutdown stops accepting, closes idle connections and waits for the
// active ones to finish, or for ctx to end.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// Close closes the listener and every connection at once.
func (s *Server) Close() error { return s.srv.Close() }
