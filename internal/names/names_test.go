package names

import (
	"errors"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    string
		want error
	}{
		{"ascii", "nightly backup", nil},
		{"accents and CJK", "sauvegarde nocturne é 夜間バックアップ", nil},
		{"emoji with a zero-width joiner", "team 👨\u200d👩\u200d👧", nil},
		{"emoji with a variation selector", "❤\ufe0f", nil},
		{"right-to-left script", "نسخ احتياطي", nil},
		{"a word joiner beside letters", "a\u2060b", nil},
		{"punctuation only", "-", nil},
		{"no-break space inside", "a\u00a0b", nil},

		{"empty", "", ErrBlank},
		{"spaces", "   ", ErrBlank},
		{"tab is a control", "\t", ErrControl},
		{"zero-width space only", "\u200b", ErrBlank},
		{"zero-width joiners only", "\u200c\u200d\u200d", ErrBlank},
		{"word joiner and BOM", "\u2060\ufeff", ErrBlank},
		{"no-break and ideographic spaces", "\u00a0\u3000", ErrBlank},
		{"Hangul filler", "\u3164", ErrBlank},
		{"half-width Hangul filler and a space", "\uffa0 ", ErrBlank},
		{"combining grapheme joiner", "\u034f", ErrBlank},
		{"variation selector alone", "\ufe0f", ErrBlank},
		{"Braille blank", "\u2800\u2800", ErrBlank},
		{"soft hyphen", "\u00ad", ErrBlank},
		{"tag characters", "\U000e0061\U000e0062", ErrBlank},

		{"NUL", "a\x00b", ErrControl},
		{"ESC", "\x1b[31mred", ErrControl},
		{"newline", "a\nb", ErrControl},
		{"carriage return", "a\rb", ErrControl},
		{"DEL", "a\x7fb", ErrControl},
		{"C1 CSI", "a\u009bb", ErrControl},
		{"C1 NEL", "a\u0085b", ErrControl},
		{"line separator", "a\u2028b", ErrControl},
		{"paragraph separator", "a\u2029b", ErrControl},

		{"right-to-left override", "invoice\u202egpj.exe", ErrBidi},
		{"left-to-right embedding", "a\u202ab", ErrBidi},
		{"pop directional formatting", "a\u202cb", ErrBidi},
		{"left-to-right override", "a\u202db", ErrBidi},
		{"first strong isolate", "a\u2068b", ErrBidi},
		{"pop directional isolate", "a\u2069b", ErrBidi},
		{"right-to-left isolate", "\u2067abc", ErrBidi},
		{"left-to-right mark", "a\u200eb", ErrBidi},
		{"right-to-left mark", "a\u200fb", ErrBidi},
		{"Arabic letter mark", "a\u061cb", ErrBidi},
		{"bidi only", "\u202e", ErrBidi},

		{"invalid UTF-8", "a\xffb", ErrInvalidUTF8},
		{"truncated UTF-8", "caf\xc3", ErrInvalidUTF8},
		{"encoded surrogate", "\xed\xa0\x80", ErrInvalidUTF8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Check(tc.s); !errors.Is(err, tc.want) {
				t.Fatalf("Check(%+q) = %v, want %v", tc.s, err, tc.want)
			}
		})
	}
}

// TestEveryFormatCharacterIsInvisible: a name made only of format
// characters (Unicode Cf) that are not bidirectional controls is blank,
// whichever they are.
func TestEveryFormatCharacterIsInvisible(t *testing.T) {
	n := 0
	for _, rng := range unicode.Cf.R16 {
		for r := rune(rng.Lo); r <= rune(rng.Hi); r += rune(rng.Stride) {
			if isBidi(r) {
				continue
			}
			n++
			if err := Check(string(r)); !errors.Is(err, ErrBlank) {
				t.Errorf("Check(%U) = %v, want ErrBlank", r, err)
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d format characters tried", n)
	}
}

// FuzzCheck: Check never panics, accepts nothing with a control or
// bidirectional character or invalid UTF-8, and accepts a string once a
// visible letter is put beside anything it accepts.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"", "a", "\u200b", "\x1b", "\u202e", "\xff", "👨\u200d👩", "\u3164"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := Check(s)
		if err != nil {
			return
		}
		if !utf8.ValidString(s) {
			t.Fatalf("accepted invalid UTF-8 %+q", s)
		}
		for _, r := range s {
			if unicode.Is(unicode.Cc, r) || isBidi(r) {
				t.Fatalf("accepted %+q with %U", s, r)
			}
		}
		if err := Check(s + "a"); err != nil {
			t.Fatalf("accepted %+q but not with a letter after it: %v", s, err)
		}
	})
}
