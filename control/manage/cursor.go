package manage

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"

	"lookout/control/state"
)

// The before cursors of the event and execution histories: opaque to
// clients, the position of the last item of the page they came with (an
// event's seq; an execution's slot and region), in base64url.

// eventCursor is the next_before of a page ending with the event seq.
func eventCursor(seq uint64) string {
	return base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, seq))
}

// executionCursor is the next_before of a page ending at pos.
func executionCursor(pos state.ExecutionPos) string {
	b := binary.BigEndian.AppendUint64(nil, uint64(pos.SlotMs))
	return base64.RawURLEncoding.EncodeToString(append(b, pos.Region...))
}

// eventsBefore reads ?before= of the event history (state.NewestEvents
// when absent); false means it answered 400.
func eventsBefore(w http.ResponseWriter, r *http.Request) (uint64, bool) {
	c := r.URL.Query().Get("before")
	if c == "" {
		return state.NewestEvents, true
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) != 8 {
		badBefore(w)
		return 0, false
	}
	return binary.BigEndian.Uint64(b), true
}

// executionsBefore reads ?before= of the execution history (nil when
// absent); false means it answered 400.
func executionsBefore(w http.ResponseWriter, r *http.Request) (*state.ExecutionPos, bool) {
	c := r.URL.Query().Get("before")
	if c == "" {
		return nil, true
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 8 || len(b) > 8+state.MaxKeyPartBytes {
		badBefore(w)
		return nil, false
	}
	return &state.ExecutionPos{SlotMs: int64(binary.BigEndian.Uint64(b)), Region: string(b[8:])}, true
}

func badBefore(w http.ResponseWriter) {
	writeError(w, http.StatusBadRequest, "invalid_request", "invalid field: before: pass the next_before of the previous page")
}
