// Package names holds the one rule every string that Lookout shows people
// as a name obeys: check names, display names, projects and tags, key,
// notification group, channel, plan and agent token names, and an agent's
// --name. The APIs, the panel and the agent check it where such a string
// comes in, so that nothing stored can hide, reorder or restyle the text
// around it where it is shown (a panel page, a terminal, an alert).
//
// Lengths are the callers': each kind of name has its own bound.
package names

import (
	"errors"
	"unicode"
	"unicode/utf8"
)

// The reasons Check refuses a name. Their text completes "name ...", as
// in an error message; callers map them to their API's code.
var (
	ErrInvalidUTF8 = errors.New("must be valid UTF-8")
	ErrControl     = errors.New("must not contain control characters")
	ErrBidi        = errors.New("must not contain bidirectional formatting characters (U+202A to U+202E, U+2066 to U+2069, U+200E, U+200F, U+061C)")
	ErrBlank       = errors.New("must not be blank (only white space or invisible characters)")
)

// Check tells whether s may be shown as a name, and if not why:
//
//   - valid UTF-8 (ErrInvalidUTF8);
//   - no control character: C0, DEL, C1, and the line and paragraph
//     separators U+2028 and U+2029, which break lines as a newline does
//     (ErrControl);
//   - no bidirectional formatting character: the embeddings and overrides
//     U+202A to U+202E, the isolates U+2066 to U+2069 and the marks U+200E,
//     U+200F and U+061C, which reorder the text shown after them
//     (ErrBidi);
//   - not blank: something is left once white space and invisible
//     characters are taken out (ErrBlank). Invisible are the format
//     characters (Unicode category Cf: the zero-width space, joiners,
//     U+2060, U+FEFF, ...), the variation selectors, the other default
//     ignorable code points (U+034F, the Hangul fillers, ...) and the
//     Braille blank U+2800. They are allowed beside visible characters (a
//     joiner in an emoji sequence).
//
// The empty string is blank: a caller for which "" means "none" checks
// only non-empty strings.
func Check(s string) error {
	if !utf8.ValidString(s) {
		return ErrInvalidUTF8
	}
	visible := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cc, r) || r == '\u2028' || r == '\u2029':
			return ErrControl
		case isBidi(r):
			return ErrBidi
		case !visible && !invisible(r):
			visible = true
		}
	}
	if !visible {
		return ErrBlank
	}
	return nil
}

// isBidi reports whether r is a bidirectional formatting character.
func isBidi(r rune) bool {
	return r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069' ||
		r == '\u200E' || r == '\u200F' || r == '\u061C'
}

// invisible reports whether r shows nothing by itself.
func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		r == '\u2800'
}
