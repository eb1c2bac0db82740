// Package atomicfile replaces small files so that a crash leaves the old
// content or the new one, never a mix.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with b: path+".tmp" written, fsynced, renamed over
// path, and the directory fsynced. One writer per path at a time (a
// temporary file a crash left is overwritten by the next Write).
func Write(path string, b []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
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
