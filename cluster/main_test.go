package cluster_test

import (
	"os"
	"testing"

	"lookout/internal/waittest"
)

// TestMain runs more parallel tests at once than GOMAXPROCS: they wait on
// raft and gossip timeouts, not on the CPU.
func TestMain(m *testing.M) { os.Exit(waittest.Main(m)) }
