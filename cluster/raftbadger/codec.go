package raftbadger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// codecVersion is the first byte of every encoded log entry. Bump it (and
// keep decoding the old layout) if the layout below ever changes.
const codecVersion byte = 1

// Encoded log layout, version 1:
//
//	version    byte   (codecVersion)
//	index      uvarint
//	term       uvarint
//	type       byte   (raft.LogType)
//	data       bytes
//	extensions bytes
//	appendedAt bytes  (time.Time.MarshalBinary; nil for the zero time)
//
// where "bytes" is uvarint(0) for a nil slice, otherwise uvarint(len+1)
// followed by the bytes, so nil and empty slices both round-trip exactly.
// time.MarshalBinary keeps seconds, nanoseconds and the zone offset.

var errCorrupt = errors.New("raftbadger: corrupt log entry")

// encodeLog appends the encoding of l to dst and returns the result.
func encodeLog(dst []byte, l *raft.Log) ([]byte, error) {
	var ts []byte
	if !l.AppendedAt.IsZero() {
		var err error
		if ts, err = l.AppendedAt.MarshalBinary(); err != nil {
			return nil, fmt.Errorf("raftbadger: encode AppendedAt of log %d: %w", l.Index, err)
		}
	}
	dst = append(dst, codecVersion)
	dst = binary.AppendUvarint(dst, l.Index)
	dst = binary.AppendUvarint(dst, l.Term)
	dst = append(dst, byte(l.Type))
	dst = appendBytes(dst, l.Data)
	dst = appendBytes(dst, l.Extensions)
	dst = appendBytes(dst, ts)
	return dst, nil
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendUvarint(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(b))+1)
	return append(dst, b...)
}

// decodeLog decodes buf into l. Data and Extensions alias buf (capped so an
// append by the caller cannot overwrite a neighbour), so buf must not be
// reused afterwards.
func decodeLog(buf []byte, l *raft.Log) error {
	d := decoder{buf: buf}
	if v := d.byte(); d.err == nil && v != codecVersion {
		return fmt.Errorf("raftbadger: unknown log encoding version %d", v)
	}
	index := d.uvarint()
	term := d.uvarint()
	typ := d.byte()
	data := d.bytes()
	ext := d.bytes()
	ts := d.bytes()
	if d.err == nil && len(d.buf) != 0 {
		d.err = errCorrupt
	}
	if d.err != nil {
		return d.err
	}
	var at time.Time
	if ts != nil {
		if err := at.UnmarshalBinary(ts); err != nil {
			return fmt.Errorf("raftbadger: decode AppendedAt of log %d: %w", index, err)
		}
	}
	*l = raft.Log{
		Index:      index,
		Term:       term,
		Type:       raft.LogType(typ),
		Data:       data,
		Extensions: ext,
		AppendedAt: at,
	}
	return nil
}

// decoder reads the layout above; the first failure sticks in err.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.buf) < 1 {
		d.err = errCorrupt
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n == 0 {
		return nil
	}
	n--
	if n > uint64(len(d.buf)) {
		d.err = errCorrupt
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}
