package badgerutil

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// TestCheckTables: the tables of a closed database pass; a table
// overwritten with random bytes, or cut short, is an error naming it (Badger
// itself would panic in a goroutine of its own while opening it); a stray
// table the manifest does not list is left to Badger, which deletes it.
func TestCheckTables(t *testing.T) {
	fill := func(t *testing.T) (string, []string) {
		dir := t.TempDir()
		db, err := Open(Config{Dir: dir, Small: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 200; i++ {
			if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(fmt.Sprint("k", i)), make([]byte, 100)) }); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil { // flushes the memtable into a table
			t.Fatal(err)
		}
		tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
		if len(tables) == 0 {
			t.Fatal("no table written")
		}
		if err := CheckTables(Config{Dir: dir, Small: true}); err != nil {
			t.Fatalf("a sound database: %v", err)
		}
		return dir, tables
	}
	rng := rand.New(rand.NewPCG(1, 2))
	junk := make([]byte, 64<<10)
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	for name, damage := range map[string]func(path string) error{
		"random bytes": func(p string) error { return os.WriteFile(p, junk, 0o600) },
		"cut short":    func(p string) error { return os.Truncate(p, 10) },
		"empty":        func(p string) error { return os.Truncate(p, 0) },
	} {
		t.Run(name, func(t *testing.T) {
			dir, tables := fill(t)
			if err := damage(tables[0]); err != nil {
				t.Fatal(err)
			}
			err := CheckTables(Config{Dir: dir, Small: true})
			if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "damaged") {
				t.Fatalf("CheckTables = %v", err)
			}
		})
	}
	dir, _ := fill(t)
	if err := os.WriteFile(filepath.Join(dir, "000777.sst"), junk, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckTables(Config{Dir: dir, Small: true}); err != nil {
		t.Fatalf("a stray table: %v", err)
	}
	db, err := Open(Config{Dir: dir, Small: true})
	if err != nil {
		t.Fatalf("open with a stray table: %v", err)
	}
	db.Close()
	if err := CheckTables(Config{Dir: filepath.Join(t.TempDir(), "missing")}); err != nil {
		t.Fatalf("a missing dir: %v", err)
	}
}

// TestLogsThroughHclog: Badger's messages go to the given logger (Badger's
// WithLoggingLevel would put its own back).
func TestLogsThroughHclog(t *testing.T) {
	if _, ok := Options(Config{Dir: t.TempDir()}).Logger.(logAdapter); !ok {
		t.Fatalf("Badger logs through %T", Options(Config{Dir: t.TempDir()}).Logger)
	}
}
