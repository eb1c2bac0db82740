package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"lookout/agent/atomicfile"
)

// TestWrite: the file is created, replaced whole, with its mode, and a
// temporary file a crash left is overwritten and gone afterwards.
func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path+".tmp", []byte("half a write from before a crash, longer than the rest"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{"first", "second, longer", "3"} {
		if err := atomicfile.Write(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != content {
			t.Fatalf("read %q, %v; want %q", b, err, content)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", st.Mode(), err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("the temporary file is left: %v", err)
	}
	if err := atomicfile.Write(filepath.Join(path, "not-a-dir", "x"), []byte("x"), 0o600); err == nil {
		t.Fatal("a write under a file succeeded")
	}
}
