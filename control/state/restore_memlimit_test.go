package state

import (
	"bytes"
	"io"
	"math"
	"runtime/debug"
	"testing"
	"testing/iotest"
)

// limitWatch reads r a byte at a time and notes whether the runtime's
// memory limit was lifted at any read.
type limitWatch struct {
	r      io.Reader
	lifted bool
}

func (w *limitWatch) Read(p []byte) (int, error) {
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		w.lifted = true
	}
	return w.r.Read(p)
}

func TestRestoreLiftsTheMemoryLimitWhileLoading(t *testing.T) {
	_, snap := snapshotOf(t)
	const limit = 512 << 20
	before := debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	w := &limitWatch{r: iotest.OneByteReader(bytes.NewReader(snap))}
	if err := openStore(t).Restore(w); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if !w.lifted {
		t.Error("the memory limit stayed while the snapshot loaded")
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("after the restore the limit is %d, want %d", got, limit)
	}

	// A restore that fails midway puts the limit back too.
	w = &limitWatch{r: iotest.OneByteReader(bytes.NewReader(snap[:len(snap)-3]))}
	if err := openStore(t).Restore(w); err == nil {
		t.Fatal("a cut stream was restored")
	}
	if !w.lifted {
		t.Error("the memory limit stayed while the cut snapshot loaded")
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("after a failed restore the limit is %d, want %d", got, limit)
	}
}
