package ratelimit

import (
	"testing"
	"time"
)

// blocked runs a Check of addr whose verify blocks until release, and
// returns once verify is running.
func blocked(t *testing.T, th *Throttle, addr string, release chan struct{}) chan bool {
	t.Helper()
	started := make(chan struct{})
	done := make(chan bool, 1)
	go func() {
		ok, _ := th.Check(addr, t0, func() bool {
			close(started)
			<-release
			return false
		})
		done <- ok
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("verify never ran")
	}
	return done
}

// A slow verify (a password hash) of one address holds no lock: another
// address's attempt completes while it runs.
func TestThrottleVerifiesWithoutALock(t *testing.T) {
	th := NewThrottle(ThrottleOptions{Burst: 5, PerSecond: 1})
	release := make(chan struct{})
	defer close(release)
	blocked(t, th, "198.51.100.1", release)
	done := make(chan bool, 1)
	go func() {
		ok, _ := th.Check("198.51.100.2", t0, func() bool { return true })
		done <- ok
	}()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("the other address's right secret was refused")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an attempt of another address waited for a verify in progress")
	}
}

// Attempts of one address in flight at once count against its budget
// before they are verified: past it the next is refused without a verify.
func TestThrottleCountsAttemptsInFlight(t *testing.T) {
	th := NewThrottle(ThrottleOptions{Burst: 3, PerSecond: 1})
	release := make(chan struct{})
	var pending []chan bool
	for range 3 {
		pending = append(pending, blocked(t, th, "198.51.100.1", release))
	}
	ok, wait := th.Check("198.51.100.1", t0, func() bool { t.Error("verified past the budget"); return true })
	if ok || wait <= 0 {
		t.Fatalf("fourth attempt in flight: %v %v", ok, wait)
	}
	close(release)
	for _, p := range pending {
		if <-p {
			t.Fatal("a wrong secret passed")
		}
	}
}

// A right secret gives its reserved failure back; wrong ones spend the
// budget, and then even a right one is refused until the bucket refills.
func TestThrottleCheck(t *testing.T) {
	th := NewThrottle(ThrottleOptions{Burst: 2, PerSecond: 0.5})
	addr := "198.51.100.1"
	for range 5 {
		if ok, _ := th.Check(addr, t0, func() bool { return true }); !ok {
			t.Fatal("right secret refused")
		}
	}
	for range 2 {
		if ok, wait := th.Check(addr, t0, func() bool { return false }); ok || wait != 0 {
			t.Fatalf("wrong secret within the budget: %v %v", ok, wait)
		}
	}
	if ok, wait := th.Check(addr, t0, func() bool { return true }); ok || wait != 2*time.Second {
		t.Fatalf("right secret while throttled: %v %v", ok, wait)
	}
	if ok, _ := th.Check(addr, t0.Add(2*time.Second), func() bool { return true }); !ok {
		t.Fatal("right secret after the wait refused")
	}
}

// Addresses beyond the cap share the overflow bucket, which is always
// verified: it refuses only wrong secrets.
func TestThrottleOverflowNeverRefusesARightSecret(t *testing.T) {
	th := NewThrottle(ThrottleOptions{Burst: 1, PerSecond: 0.001, MaxKeys: 2})
	th.Check("a", t0, func() bool { return false })
	th.Check("b", t0, func() bool { return false })
	if ok, wait := th.Check("c", t0, func() bool { return false }); ok || wait != 0 {
		t.Fatalf("first overflow failure: %v %v", ok, wait)
	}
	if ok, wait := th.Check("d", t0, func() bool { return false }); ok || wait <= 0 {
		t.Fatalf("overflow failure past its budget: %v %v", ok, wait)
	}
	if ok, _ := th.Check("e", t0, func() bool { return true }); !ok {
		t.Fatal("right secret of an address beyond the cap refused")
	}
	if th.Len() != 2 {
		t.Fatalf("%d addresses tracked, cap 2", th.Len())
	}
}

func TestThrottleFail(t *testing.T) {
	th := NewThrottle(ThrottleOptions{Burst: 2, PerSecond: 1})
	if th.Fail("a", t0) != 0 || th.Fail("a", t0) != 0 {
		t.Fatal("failures within the budget throttled")
	}
	if w := th.Fail("a", t0); w != time.Second {
		t.Fatalf("third failure: wait %v", w)
	}
	if w := th.Wait("a", t0); w != time.Second {
		t.Fatalf("Wait %v", w)
	}
	if w := th.Wait("b", t0); w != 0 {
		t.Fatalf("another address waits %v", w)
	}
}
