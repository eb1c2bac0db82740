// Package jsonpath is the JSON path of an http_check's json_path
// assertions: a deliberately small subset of JSONPath that always names
// exactly one value, so that "equals" has one meaning.
//
//	path    = "$" *segment
//	segment = "." name | "[" index "]" | "['" text "']" | "[\"" text "\"]"
//	name    = one or more letters, digits, "_" or "-" (any other name is quoted)
//	index   = a decimal integer, 0 to 999999999, no sign or leading zero
//
// Inside quotes a backslash escapes the next character (\' \" \\). A path
// is at most MaxLen bytes of UTF-8 with at most MaxSegments segments.
// Wildcards, filters, slices, unions and recursive descent are not part of
// it: an assertion is about one field of an answer, and a path that could
// name several values would need a rule for which of them must equal.
//
// Lookup reads a document as a stream of tokens and descends only along
// the path, skipping everything else, so it keeps nothing of the document
// but the value it found and reads no further than that value.
package jsonpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of a path.
const (
	MaxLen      = 256
	MaxSegments = 32
	maxIndex    = 999_999_999
)

// Path is a parsed path. The zero Path is "$", the whole document.
type Path struct {
	segs []segment
}

// segment is one step: a member name, or an array index when isIndex.
type segment struct {
	name    string
	index   int
	isIndex bool
}

// Parse parses s, or says what is wrong with it.
func Parse(s string) (Path, error) {
	switch {
	case len(s) > MaxLen:
		return Path{}, fmt.Errorf("is longer than %d bytes", MaxLen)
	case !utf8.ValidString(s):
		return Path{}, errors.New("is not valid UTF-8")
	case !strings.HasPrefix(s, "$"):
		return Path{}, errors.New(`must start with "$"`)
	}
	var p Path
	for i := 1; i < len(s); {
		if len(p.segs) == MaxSegments {
			return Path{}, fmt.Errorf("has more than %d segments", MaxSegments)
		}
		var seg segment
		var err error
		switch s[i] {
		case '.':
			seg, i, err = parseName(s, i+1)
		case '[':
			seg, i, err = parseBracket(s, i+1)
		default:
			err = fmt.Errorf("expects . or [ at byte %d", i)
		}
		if err != nil {
			return Path{}, err
		}
		p.segs = append(p.segs, seg)
	}
	return p, nil
}

// nameChar reports whether r may appear in a dotted name.
func nameChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'
}

// parseName reads a dotted name starting at i.
func parseName(s string, i int) (segment, int, error) {
	start := i
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !nameChar(r) {
			break
		}
		i += n
	}
	if i == start {
		return segment{}, 0, fmt.Errorf("has an empty or invalid name at byte %d (quote it: ['name'])", start)
	}
	return segment{name: s[start:i]}, i, nil
}

// parseBracket reads an index or a quoted name starting after "[".
func parseBracket(s string, i int) (segment, int, error) {
	if i >= len(s) {
		return segment{}, 0, errors.New("ends inside [ ]")
	}
	if q := s[i]; q == '\'' || q == '"' {
		var b strings.Builder
		for i++; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '\\' && i+1 < len(s) && s[i+1] >= ' ' && s[i+1] != 0x7f:
				i++
				b.WriteByte(s[i])
			case c == q:
				if i+1 >= len(s) || s[i+1] != ']' {
					return segment{}, 0, fmt.Errorf("expects ] after the quoted name at byte %d", i+1)
				}
				return segment{name: b.String()}, i + 2, nil
			case c < ' ' || c == 0x7f:
				return segment{}, 0, fmt.Errorf("has a control character at byte %d", i)
			default:
				b.WriteByte(c)
			}
		}
		return segment{}, 0, errors.New("ends inside a quoted name")
	}
	end := strings.IndexByte(s[i:], ']')
	if end < 0 {
		return segment{}, 0, errors.New("ends inside [ ]")
	}
	digits := s[i : i+end]
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || n > maxIndex || digits[0] == '+' || digits[0] == '-' || len(digits) > 1 && digits[0] == '0' {
		return segment{}, 0, fmt.Errorf("has [%s]: an index is a whole number from 0 to %d, a name is quoted", digits, maxIndex)
	}
	return segment{index: n, isIndex: true}, i + end + 1, nil
}

// String returns the path in its canonical form: names as .name when
// they allow it, else quoted with single quotes.
func (p Path) String() string {
	var b strings.Builder
	b.WriteByte('$')
	for _, s := range p.segs {
		switch {
		case s.isIndex:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case s.name != "" && strings.IndexFunc(s.name, func(r rune) bool { return !nameChar(r) }) < 0:
			b.WriteString("." + s.name)
		default:
			b.WriteString("['")
			for i := 0; i < len(s.name); i++ {
				if c := s.name[i]; c == '\'' || c == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(s.name[i])
			}
			b.WriteString("']")
		}
	}
	return b.String()
}

// Len returns the number of segments.
func (p Path) Len() int { return len(p.segs) }
