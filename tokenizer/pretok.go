package tokenizer

import (
	"fmt"
	"strings"
	"unicode"
)

// decodeLenient decodes UTF-8 as llama.cpp does: a lead byte and the
// continuation bytes it calls for make a code point without checks for
// overlong forms, surrogates or the U+10FFFF limit; any other byte is
// U+FFFD. Go's decoder is stricter, so it cannot be used here.
func decodeLenient(s string) []rune {
	out := make([]rune, 0, len(s))
	cont := func(i int) bool { return i < len(s) && s[i]&0xC0 == 0x80 }
	for i := 0; i < len(s); {
		b := s[i]
		switch {
		case b < 0x80:
			out = append(out, rune(b))
			i++
		case b&0xE0 == 0xC0 && cont(i+1):
			out = append(out, rune(b&0x1F)<<6|rune(s[i+1]&0x3F))
			i += 2
		case b&0xF0 == 0xE0 && cont(i+1) && cont(i+2):
			out = append(out, rune(b&0x0F)<<12|rune(s[i+1]&0x3F)<<6|rune(s[i+2]&0x3F))
			i += 3
		case b&0xF8 == 0xF0 && cont(i+1) && cont(i+2) && cont(i+3):
			out = append(out, rune(b&0x07)<<18|rune(s[i+1]&0x3F)<<12|rune(s[i+2]&0x3F)<<6|rune(s[i+3]&0x3F))
			i += 4
		default:
			out = append(out, 0xFFFD)
			i++
		}
	}
	return out
}

// appendUTF8 encodes c as llama.cpp does (surrogates included, unlike
// Go's encoder); false above U+10FFFF, where llama.cpp throws.
func appendUTF8(b []byte, c rune) ([]byte, bool) {
	switch {
	case c < 0x80:
		return append(b, byte(c)), true
	case c < 0x800:
		return append(b, 0xC0|byte(c>>6), 0x80|byte(c&0x3F)), true
	case c < 0x10000:
		return append(b, 0xE0|byte(c>>12), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F)), true
	case c <= 0x10FFFF:
		return append(b, 0xF0|byte(c>>18), 0x80|byte(c>>12&0x3F), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F)), true
	}
	return b, false
}

// Code point classes of the pre-tokenizer. Every code point of the text
// has some class (llama.cpp's table gives unassigned ones "undefined");
// only a position past the end has none (0).
const (
	cAny = 1 << iota
	cLetter
	cNumber
	cSpace
)

// classOf uses Go's Unicode tables (Unicode 15.0 in Go 1.25); llama.cpp
// has its own generated table. TestEveryCodePoint compares the two through
// libllama as far as token ids can show it.
func classOf(c rune) uint8 {
	f := uint8(cAny)
	if unicode.IsLetter(c) {
		f |= cLetter
	}
	if unicode.IsNumber(c) {
		f |= cNumber
	}
	// llama.cpp's whitespace set is Unicode's White_Space property.
	if unicode.Is(unicode.White_Space, c) {
		f |= cSpace
	}
	return f
}

// preTokenizeLlama3 splits text into words as Llama 3's pre-tokenizer
// regex does,
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// by hand (Go's regexp has no lookahead), trying the alternatives in
// order at each position as llama.cpp's own splitter does, and returns
// the words byte-level encoded.
func preTokenizeLlama3(text string) ([]string, error) {
	cp := decodeLenient(text)
	for _, c := range cp {
		if c > unicode.MaxRune {
			return nil, fmt.Errorf("%w: code point above U+10FFFF in %q", ErrText, truncate(text))
		}
	}
	n := len(cp)
	at := func(p int) rune {
		if p < n {
			return cp[p]
		}
		return -1
	}
	class := func(p int) uint8 {
		if p < n {
			return classOf(cp[p])
		}
		return 0
	}
	var words []string
	var buf []byte
	prev := 0
	emit := func(end int) int {
		l := end - prev
		if l > 0 {
			buf = buf[:0]
			for _, c := range cp[prev:end] {
				buf, _ = appendUTF8(buf, c)
			}
			words = append(words, encodeByteLevel(string(buf)))
		}
		prev = end
		return l
	}
	crlf := func(c rune) bool { return c == '\r' || c == '\n' }
	for pos := 0; pos < n; {
		c, f := cp[pos], class(pos)
		if c == '\'' && pos+1 < n {
			switch unicode.ToLower(cp[pos+1]) {
			case 's', 't', 'm', 'd':
				pos += emit(pos + 2)
				continue
			}
			if pos+2 < n {
				s := string([]rune{unicode.ToLower(cp[pos+1]), unicode.ToLower(cp[pos+2])})
				if s == "re" || s == "ve" || s == "ll" {
					pos += emit(pos + 3)
					continue
				}
			}
		}
		if !crlf(c) && f&cNumber == 0 && (f&cLetter != 0 || class(pos+1)&cLetter != 0) {
			pos++
			for class(pos)&cLetter != 0 {
				pos++
			}
			emit(pos)
			continue
		}
		if f&cNumber != 0 {
			for ini := pos; class(pos)&cNumber != 0; {
				if pos++; pos-ini >= 3 {
					emit(pos)
					ini = pos
				}
			}
			emit(pos)
			continue
		}
		f2 := f
		if c == ' ' {
			f2 = class(pos + 1)
		}
		if f2&(cSpace|cLetter|cNumber) == 0 && f2 != 0 {
			if c == ' ' {
				pos++
			}
			for f2&(cSpace|cLetter|cNumber) == 0 && f2 != 0 {
				pos++
				f2 = class(pos)
			}
			for crlf(at(pos)) {
				pos++
			}
			emit(pos)
			continue
		}
		spaces, lastCRLF := 0, 0
		for class(pos+spaces)&cSpace != 0 {
			if crlf(cp[pos+spaces]) {
				lastCRLF = pos + spaces + 1
			}
			spaces++
		}
		switch {
		case lastCRLF > 0:
			pos = lastCRLF
		case spaces > 1 && pos+spaces < n:
			pos += spaces - 1 // \s+(?!\S): leave the last space to the next word
		case spaces > 0:
			pos += spaces
		default:
			pos++
		}
		emit(pos)
	}
	return words, nil
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return strings.Clone(s)
}
