package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookout/agent"
)

// TestLoadID: a first start makes an id and keeps it; a file of garbage
// (bytes that are not an id, an id with spaces) is an error naming the file
// and what to do, instead of an id the control plane refuses.
func TestLoadID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	id, err := agent.LoadID(dir)
	if err != nil || !strings.HasPrefix(id, "ag_") {
		t.Fatalf("first start: %q, %v", id, err)
	}
	if again, err := agent.LoadID(dir); err != nil || again != id {
		t.Fatalf("second start: %q, %v", again, err)
	}
	path := filepath.Join(dir, agent.IDFile)
	for _, garbage := range []string{"\xff\xfe\x00garbage\x01", "ag 123", strings.Repeat("a", 100)} {
		if err := os.WriteFile(path, []byte(garbage), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := agent.LoadID(dir)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "remove the file") ||
			strings.Contains(err.Error(), "\n") {
			t.Fatalf("garbage %q: %v", garbage, err)
		}
	}
	if err := agent.SaveID(dir, id); err != nil {
		t.Fatal(err)
	}
	if again, err := agent.LoadID(dir); err != nil || again != id {
		t.Fatalf("after SaveID: %q, %v", again, err)
	}
}
