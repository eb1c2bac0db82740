package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"lookout/agent/buffer"
	"lookout/agent/ingest"
	"lookout/internal/apikey"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// event is a ping as the local Ingest API buffers it.
func event(i int) *raftv1.Event {
	return &raftv1.Event{
		EventType: "ping", Monitor: fmt.Sprintf("backup-%d", i%1000), Status: "complete",
		Host: "db-1.internal", Duration: proto.Float64(12.5), ExitCode: proto.Int64(0),
		AccountId: "0b6f2c3e-5f7d-4c1a-9b2e-6a1d2c3e4f50", KeyId: "5f7d4c1a-9b2e-6a1d-2c3e-4f500b6f2c3e",
		ReceivedUnixMs: time.Now().UnixMilli(), EventId: uuid.NewString(),
	}
}

func open(c config, dir string) (*buffer.Buffer, error) {
	return buffer.Open(buffer.Options{Dir: dir, MaxBytes: c.maxBytes, Small: c.small})
}

// latencies summarizes append latencies.
type latencies []time.Duration

func (l latencies) String() string {
	if len(l) == 0 {
		return "-"
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	q := func(p float64) time.Duration { return l[int(p*float64(len(l)-1))].Round(10 * time.Microsecond) }
	return fmt.Sprintf("p50 %s, p99 %s, max %s", q(0.5), q(0.99), q(1))
}

// appendFor appends from writers goroutines for d (or until n events when
// n > 0) and returns the count, the time taken and the latencies.
func appendFor(b *buffer.Buffer, writers int, d time.Duration, n int) (int, time.Duration, latencies, error) {
	var (
		count atomic.Int64
		mu    sync.Mutex
		lat   latencies
		wg    sync.WaitGroup
		errs  = make(chan error, writers)
	)
	stop := time.Now().Add(d)
	start := time.Now()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine latencies
			for i := w; ; i += writers {
				if n > 0 && count.Load() >= int64(n) || n == 0 && time.Now().After(stop) {
					break
				}
				t0 := time.Now()
				if err := b.AppendEvent(event(i)); err != nil {
					errs <- err
					return
				}
				mine = append(mine, time.Since(t0))
				count.Add(1)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		return 0, 0, nil, err
	default:
	}
	return int(count.Load()), elapsed, lat, nil
}

// benchAppend measures fsynced appends, sequential then concurrent.
func benchAppend(c config, root string) error {
	b, err := open(c, filepath.Join(root, "append"))
	if err != nil {
		return err
	}
	defer b.Close()
	fmt.Printf("\nappend (each fsynced before it returns; event of %d bytes encoded)\n", proto.Size(event(0)))
	for _, w := range []int{1, c.writers} {
		d := c.seqFor
		if w > 1 {
			d = c.parFor
		}
		n, el, lat, err := appendFor(b, w, d, 0)
		if err != nil {
			return err
		}
		fmt.Printf("  %2d appender(s): %7d events in %s = %8.0f events/s; latency %s\n",
			w, n, el.Round(time.Millisecond), float64(n)/el.Seconds(), lat)
	}
	printMem("after append")
	return nil
}

// benchIngest measures POST /ping to the local Ingest API over loopback.
func benchIngest(c config, root string) error {
	b, err := open(c, filepath.Join(root, "ingest"))
	if err != nil {
		return err
	}
	defer b.Close()
	secret, hash, err := apikey.New(apikey.Ingest)
	if err != nil {
		return err
	}
	key := &agentv1.IngestKey{Id: "k1", AccountId: "a1", Hash: hash, Plan: &raftv1.Plan{IngestRatePerSecond: 1e9, IngestBurst: 1 << 30}}
	api := ingest.New(ingest.Options{Keys: oneKey{hash: string(hash), key: key}, Sink: b})
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: c.writers, MaxConnsPerHost: c.writers}
	cl := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()

	var count, failed atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(c.parFor)
	start := time.Now()
	for w := range c.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; time.Now().Before(stop); i += c.writers {
				body := fmt.Sprintf(`{"event_type":"ping","monitor":"backup-%d","status":"complete","duration":12.5,"host":"db-1.internal"}`, i%1000)
				req, _ := http.NewRequest("POST", srv.URL+"/ping", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+secret)
				resp, err := cl.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body) // so the connection is reused
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failed.Add(1)
					continue
				}
				count.Add(1)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	fmt.Printf("\nlocal ingest: POST /ping over loopback, %d connections, answered after the fsynced append\n", c.writers)
	fmt.Printf("  %d pings answered 200 in %s = %.0f pings/s (%d failed)\n", count.Load(), el.Round(time.Millisecond),
		float64(count.Load())/el.Seconds(), failed.Load())
	printMem("after ingest")
	return nil
}

// oneKey is a KeyStore of one key.
type oneKey struct {
	hash string
	key  *agentv1.IngestKey
}

func (k oneKey) KeyByHash(hash []byte) (*agentv1.IngestKey, bool) {
	return k.key, string(hash) == k.hash
}

// benchDrain buffers c.events events, reopens the buffer and drains it.
func benchDrain(c config, root string) error {
	dir := filepath.Join(root, "drain")
	b, err := open(c, dir)
	if err != nil {
		return err
	}
	fmt.Printf("\ndrain: %d events buffered by %d appenders, the buffer reopened, then read in batches of %d and acked\n",
		c.events, c.writers, c.batch)
	n, el, _, err := appendFor(b, c.writers, 0, c.events)
	if err != nil {
		b.Close()
		return err
	}
	s := b.Stats()
	fmt.Printf("  fill: %d events in %s = %.0f events/s; %d MiB counted against the bound\n",
		n, el.Round(time.Millisecond), float64(n)/el.Seconds(), s.Bytes>>20)
	printMem("after fill")
	if err := b.Close(); err != nil {
		return err
	}
	start := time.Now()
	if b, err = open(c, dir); err != nil {
		return err
	}
	defer b.Close()
	s = b.Stats()
	fmt.Printf("  reopen (counting %d events): %s; on disk %d MiB\n", s.Events, time.Since(start).Round(time.Millisecond), dirSize(dir)>>20)
	runtime.GC()

	start = time.Now()
	read, batches := 0, 0
	var readTime, ackTime time.Duration
	for {
		t0 := time.Now()
		got, err := b.Events(c.batch, 4<<20)
		if err != nil {
			return err
		}
		readTime += time.Since(t0)
		if len(got) == 0 {
			break
		}
		t1 := time.Now()
		if err := b.AckEvents(got[len(got)-1].Seq); err != nil {
			return err
		}
		ackTime += time.Since(t1)
		read += len(got)
		batches++
	}
	el = time.Since(start)
	fmt.Printf("  drain: %d events in %d batches in %s = %.0f events/s (reading %s, acking %s)\n",
		read, batches, el.Round(time.Millisecond), float64(read)/el.Seconds(), readTime.Round(time.Millisecond), ackTime.Round(time.Millisecond))
	if s := b.Stats(); s.Events != 0 || s.Bytes != 0 {
		return errors.New("the buffer is not empty after the drain")
	}
	printMem("after drain")
	return nil
}

// printMem prints the process's resident memory and Go heap.
func printMem(when string) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, hwm := procStatus("VmRSS"), procStatus("VmHWM")
	fmt.Printf("  memory %s: RSS %s, peak RSS %s, Go heap in use %d MiB\n", when, rss, hwm, ms.HeapInuse>>20)
}

// procStatus reads one field of /proc/self/status ("?" elsewhere).
func procStatus(field string) string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "?"
}

// dirSize is the disk space the files under dir take (their blocks:
// Badger's files are sparse, preallocated and memory-mapped).
func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		} else {
			n += info.Size()
		}
		return nil
	})
	return n
}
