package badgerutil

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

func TestSmallOptionsAndGC(t *testing.T) {
	dir := t.TempDir()
	if o := Options(Config{Dir: dir, Small: true}); o.MemTableSize != 4<<20 || o.SyncWrites {
		t.Fatalf("small options: memtable %d, sync %v", o.MemTableSize, o.SyncWrites)
	}
	if o := Options(Config{Dir: dir, SyncWrites: true}); !o.SyncWrites || o.MemTableSize == 4<<20 {
		t.Fatalf("default options: memtable %d, sync %v", o.MemTableSize, o.SyncWrites)
	}
	db, err := Open(Config{Dir: dir, Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Values past the 1 KiB threshold live in the value log; overwrite them
	// so there is garbage, and let GC run while we read.
	stop := StartGC(db, time.Millisecond, 0.01, nil)
	val := bytes.Repeat([]byte("v"), 4<<10)
	for round := 0; round < 3; round++ {
		for i := 0; i < 200; i++ {
			err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(fmt.Sprint(i)), val) })
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	stop()
	stop() // idempotent
	err = db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte("199"))
		if err != nil {
			return err
		}
		got, err := item.ValueCopy(nil)
		if err == nil && !bytes.Equal(got, val) {
			err = fmt.Errorf("value changed")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
