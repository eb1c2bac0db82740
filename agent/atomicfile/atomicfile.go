// Package atomicfile replaces small files so that a crash leaves the old
// content or the new one, never a mix.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with b: a temporary file in the same directory,
// fsynced, renamed over path, and the directory fsynced.
func Write(path string, b []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("write %s: sync the directory: %w", path, err)
	}
	return nil
}

// Clean removes the temporary files a crash during Write left beside
// path.
func Clean(path string) {
	tmps, _ := filepath.Glob(path + ".tmp*")
	for _, t := range tmps {
		os.Remove(t)
	}
}
