package schedule

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// DefaultZone is the zone of a schedule that names none.
const DefaultZone = "UTC"

// maxZoneName bounds a zone name; the longest IANA name is 32 characters.
const maxZoneName = 64

// ErrZoneInvalid is wrapped by every error that LoadZone returns.
var ErrZoneInvalid = errors.New("invalid time zone")

// zoneinfoZip is the IANA time zone database as the Go toolchain ships it
// ($GOROOT/lib/time/zoneinfo.zip; `make tzdata` copies it). Zones are read
// from this copy only, never from the host: the state machine computes
// ping deadlines from schedules, so every node must see the same rules
// whatever is installed where it runs, and the FROM-scratch image has no
// zone files at all.
//
//go:embed zoneinfo.zip
var zoneinfoZip []byte

// zones is the embedded database, opened once. It is immutable: a loaded
// location is cached so that the deadline engine, which computes the next
// time of every scheduled monitor, parses each zone once.
type zones struct {
	files  map[string]*zip.File
	loaded sync.Map // name -> *time.Location
}

var zoneDB = sync.OnceValues(func() (*zones, error) {
	r, err := zip.NewReader(bytes.NewReader(zoneinfoZip), int64(len(zoneinfoZip)))
	if err != nil {
		return nil, fmt.Errorf("the embedded zone database: %w", err)
	}
	z := &zones{files: make(map[string]*zip.File, len(r.File))}
	for _, f := range r.File {
		z.files[f.Name] = f
	}
	return z, nil
})

// LoadZone returns the location of an IANA zone name such as
// "Europe/Berlin". The empty name is UTC. "Local" (the host's zone, which
// differs between nodes) and names outside the database are refused with
// an error that wraps ErrZoneInvalid.
func LoadZone(name string) (*time.Location, error) {
	switch {
	case name == "" || name == "UTC":
		return time.UTC, nil
	case len(name) > maxZoneName:
		return nil, fmt.Errorf("%w: longer than %d characters", ErrZoneInvalid, maxZoneName)
	}
	db, err := zoneDB()
	if err != nil {
		return nil, err
	}
	if loc, ok := db.loaded.Load(name); ok {
		return loc.(*time.Location), nil
	}
	f, ok := db.files[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q is not an IANA time zone name such as Europe/Berlin or America/New_York", ErrZoneInvalid, name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return nil, err
	}
	loc, err := time.LoadLocationFromTZData(name, data)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrZoneInvalid, name, err)
	}
	actual, _ := db.loaded.LoadOrStore(name, loc)
	return actual.(*time.Location), nil
}
