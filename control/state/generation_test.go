package state

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// generations lists the generation directories of a state directory.
func generations(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), genPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// requireGenerations checks that dir holds n generations, one of them
// the one CURRENT names.
func requireGenerations(t *testing.T, dir string, n int) {
	t.Helper()
	gens := generations(t, dir)
	cur, err := readCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range gens {
		found = found || g == genName(cur)
	}
	if len(gens) != n || !found {
		t.Fatalf("state directory holds %v, CURRENT names %s; want %d generations with it", gens, genName(cur), n)
	}
}

// TestStateDirectoryOpensBeforeAndAfterRestore: a state directory opens
// again with its state, before and after a restore, and holds only the
// generation in use.
func TestStateDirectoryOpensBeforeAndAfterRestore(t *testing.T) {
	_, snap := snapshotOf(t)
	dir := t.TempDir()
	s := openStoreAt(t, dir)
	mustOK(t, s, newAccount("before"))
	s.Close()
	s = openStoreAt(t, dir)
	if _, err := s.Account("before"); err != nil || s.AppliedIndex() != 1 {
		t.Fatalf("reopened: applied %d, account %v", s.AppliedIndex(), err)
	}
	requireGenerations(t, dir, 1)
	if err := s.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	mustOK(t, s, newAccount("after"))
	want := dump(t, s)
	s.Close()
	requireGenerations(t, dir, 1)
	s = openStoreAt(t, dir)
	if !bytes.Equal(dump(t, s), want) {
		t.Fatal("the restored state changed across a restart")
	}
	if cur, _ := readCurrent(dir); cur != 2 {
		t.Fatalf("CURRENT names generation %d after one restore", cur)
	}
}

// TestOpenRemovesLeftoversAndRefusesDamage: Open removes generations that
// are not in use and a half-written CURRENT, keeps other files, and
// refuses a directory it cannot trust with one clear error.
func TestOpenRemovesLeftoversAndRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	s := openStoreAt(t, dir)
	mustOK(t, s, newAccount("kept"))
	s.Close()
	for _, p := range []string{"gen-2/000001.sst", "gen-0/x", currentFile + ".tmp", "notes.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte("junk"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s = openStoreAt(t, dir)
	if _, err := s.Account("kept"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	requireGenerations(t, dir, 1)
	if _, err := os.Stat(filepath.Join(dir, currentFile+".tmp")); !os.IsNotExist(err) {
		t.Fatalf("a half-written CURRENT is left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatalf("a file that is not the state's was removed: %v", err)
	}

	for name, damage := range map[string]func(dir string) error{
		"damaged CURRENT": func(dir string) error { return os.WriteFile(filepath.Join(dir, currentFile), []byte("gen-x\n"), 0o600) },
		"missing generation": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, currentFile), []byte("gen-9\n"), 0o600)
		},
		"database without generations": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "MANIFEST"), []byte("badger"), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if name != "database without generations" {
				openStoreAt(t, dir).Close()
			}
			if err := damage(dir); err != nil {
				t.Fatal(err)
			}
			s, err := Open(Options{Dir: dir, Small: true})
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("the error does not name the directory: %v", err)
			}
			t.Log(err)
		})
	}
}
