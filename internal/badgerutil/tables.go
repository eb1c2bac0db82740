package badgerutil

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"google.golang.org/protobuf/proto"
)

// CheckTables reads the footer of every table the manifest of the
// database c describes lists, and verifies the checksum of its index: the
// part Badger reads when it opens a table. Badger opens its tables in
// goroutines of its own and panics on a table whose footer points outside
// the file (a damaged or foreign file), which no recover around
// badger.Open can catch; checked first, such a file is an error naming it
// instead. A table whose index checks out is Badger's own. Tables the
// manifest does not list (a flush cut short by a crash) are Badger's to
// delete when it opens; a missing or unreadable manifest is Badger's to
// report.
func CheckTables(c Config) error {
	fp, err := os.Open(filepath.Join(c.Dir, badger.ManifestFilename))
	if err != nil {
		return nil
	}
	defer fp.Close()
	o := Options(c)
	m, _, err := badger.ReplayManifestFile(fp, o.ExternalMagicVersion, o)
	if err != nil {
		return nil
	}
	ids := make([]uint64, 0, len(m.Tables))
	for id := range m.Tables {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		f := table.NewFilename(id, c.Dir)
		if err := checkTable(f); err != nil {
			return fmt.Errorf("table %s is damaged or not Badger's: %w", f, err)
		}
	}
	return nil
}

// checkTable checks one table's footer. The layout, from the end of the
// file: checksum length (4 bytes, big endian), the checksum of the index
// (pb.Checksum), the index length (4), the index.
func checkTable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	readAt := func(off, n int64) ([]byte, error) {
		if off < 0 || n < 0 || off+n > size {
			return nil, fmt.Errorf("its footer points outside the file (%d bytes)", size)
		}
		b := make([]byte, n)
		_, err := f.ReadAt(b, off)
		return b, err
	}
	pos := size - 4
	b, err := readAt(pos, 4)
	if err != nil {
		return err
	}
	sumLen := int64(binary.BigEndian.Uint32(b))
	pos -= sumLen
	b, err = readAt(pos, sumLen)
	if err != nil {
		return err
	}
	sum := &pb.Checksum{}
	if err := proto.Unmarshal(b, sum); err != nil {
		return fmt.Errorf("its index checksum cannot be read: %w", err)
	}
	pos -= 4
	b, err = readAt(pos, 4)
	if err != nil {
		return err
	}
	indexLen := int64(binary.BigEndian.Uint32(b))
	pos -= indexLen
	index, err := readAt(pos, indexLen)
	if err != nil {
		return err
	}
	if err := y.VerifyChecksum(index, sum); err != nil {
		return fmt.Errorf("its index fails its checksum: %w", err)
	}
	return nil
}
