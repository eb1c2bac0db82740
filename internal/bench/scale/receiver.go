package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// receiver is the benchmark's HTTP server on loopback: the checks' target
// (GET /check, 200 "ok") and the accounts' webhook channel (POST /hook),
// which notes when each alert first arrived.
type receiver struct {
	url    string // http://host:port
	srv    *http.Server
	checks atomic.Int64

	mu     sync.Mutex
	alerts map[string]alertSeen // by alert id (webhook-id): retries count once
}

// alertSeen is one alert as the receiver saw it first.
type alertSeen struct {
	typ        string
	monitor    string
	occurredAt time.Time
	// raised is when the leader proposed the alert (the missed event's
	// received_at: the time stamped into the command).
	raised   time.Time
	received time.Time
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + ln.Addr().String(), alerts: map[string]alertSeen{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /check", func(w http.ResponseWriter, _ *http.Request) {
		r.checks.Add(1)
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("POST /hook", r.hook)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *receiver) hook(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	var body struct {
		Type       string    `json:"type"`
		OccurredAt time.Time `json:"occurred_at"`
		Monitor    struct {
			Name string `json:"name"`
		} `json:"monitor"`
		Event struct {
			ReceivedAt time.Time `json:"received_at"`
		} `json:"event"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	if _, ok := r.alerts[id]; !ok {
		r.alerts[id] = alertSeen{typ: body.Type, monitor: body.Monitor.Name, occurredAt: body.OccurredAt, raised: body.Event.ReceivedAt, received: at}
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// seen is a copy of the alerts received so far that match keep.
func (r *receiver) seen(keep func(alertSeen) bool) []alertSeen {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []alertSeen
	for _, a := range r.alerts {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

func (r *receiver) close() { r.srv.Close() }
