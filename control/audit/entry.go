package audit

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"

	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// ID is the id of an audit entry as the API and the panel show it: its
// command's raft index and its position among that command's entries.
func ID(e *statev1.AuditEntry) string {
	return fmt.Sprintf("%d-%d", e.GetRaftIndex(), e.GetPosition())
}

// Cursor is the next_before of a page of the audit log that ends with the
// entry at p: opaque to clients, as the other histories' cursors are.
func Cursor(p state.AuditPos) string {
	b := binary.BigEndian.AppendUint64(nil, p.Index)
	return base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint32(b, p.Position))
}

// ParseCursor reads a Cursor back; false when c is none.
func ParseCursor(c string) (state.AuditPos, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) != 12 {
		return state.AuditPos{}, false
	}
	return state.AuditPos{Index: binary.BigEndian.Uint64(b), Position: binary.BigEndian.Uint32(b[8:])}, true
}
