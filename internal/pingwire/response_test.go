package pingwire

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// WriteSuccess is WriteJSON of Success (with created: true when it says
// so), byte for byte and header for header.
func TestWriteSuccessIsTheEncodedSuccess(t *testing.T) {
	for _, created := range []bool{false, true} {
		want := httptest.NewRecorder()
		WriteJSON(want, http.StatusOK, SuccessBody{Status: Success.Status, Created: created})
		got := httptest.NewRecorder()
		WriteSuccess(got, created)
		if got.Code != want.Code || got.Body.String() != want.Body.String() {
			t.Fatalf("WriteSuccess(%t): %d %q, WriteJSON: %d %q", created, got.Code, got.Body.String(), want.Code, want.Body.String())
		}
		for _, h := range []string{"Content-Type", "Cache-Control"} {
			if got.Header().Get(h) != want.Header().Get(h) || got.Header().Get(h) == "" {
				t.Fatalf("%s: %q, want %q", h, got.Header().Get(h), want.Header().Get(h))
			}
		}
	}
	got := httptest.NewRecorder()
	WriteSuccess(got, false)
	// The shared header values stay as they were when a handler adds to them.
	got.Header().Add("Cache-Control", "private")
	again := httptest.NewRecorder()
	WriteSuccess(again, false)
	if v := again.Header().Values("Cache-Control"); len(v) != 1 || v[0] != "no-store" {
		t.Fatalf("Cache-Control after another answer's Add: %q", v)
	}
}
