// Package channeltest holds helpers for the tests of alert channels: a
// fixed alert and clock, golden files, an HTTP receiver that records
// requests and a real SMTP server on loopback. It is imported by tests
// only.
package channeltest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the -update flag of every test binary that imports this
// package: go test ./... -update rewrites the golden files. Tests must
// not define a flag of the same name.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Golden compares got with testdata/name, or writes got there when the
// test runs with -update.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run the test with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
