package main

import (
	"testing"
	"time"
)

// TestFirstAckAfterCountsPingsSentAfter: a ping sent before the kill and
// acknowledged after it is not the cluster recovering.
func TestFirstAckAfterCountsPingsSentAfter(t *testing.T) {
	kill := time.Unix(100, 0)
	sec := func(s float64) time.Time { return kill.Add(time.Duration(s * float64(time.Second))) }
	l := newPingLog()
	l.acks = []ack{
		{at: sec(-1), sent: sec(-1.1)},   // before the kill
		{at: sec(0.01), sent: sec(-0.2)}, // committed by the old leader
		{at: sec(0.9), sent: sec(0.5)},   // the new leader's first
		{at: sec(1.0), sent: sec(0.6)},
	}
	if at, ok := l.firstAckAfter(kill); !ok || !at.Equal(sec(0.9)) {
		t.Fatalf("first ack after the kill: %v %v, want %v", at.Sub(kill), ok, 900*time.Millisecond)
	}
	if _, ok := l.firstAckAfter(sec(2)); ok {
		t.Fatal("an ack after the last one")
	}
}
