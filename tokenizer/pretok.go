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

// preTokenizer names the BPE pre-tokenizers implemented, by what
// llama.cpp's tokenizer.ggml.pre selects.
type preTokenizer int

const (
	// preLlama3 is Llama 3's regex (splitLlama3).
	preLlama3 preTokenizer = iota
	// preSmolLM is llama.cpp's LLAMA_VOCAB_PRE_TYPE_SMOLLM (also
	// StarCoder's, Refact's, Command R's): every \p{N} code point is cut
	// out alone first, then each piece is split by GPT-2's regex
	// (splitGPT2).
	preSmolLM
)

// preTokenize splits text into words as the pre-tokenizer's regexes do,
// each word byte-level encoded. llama.cpp applies a pre-tokenizer's regexes
// in turn, each to the pieces the previous one left, and a regex sees only
// its piece: its lookahead stops at the piece's end.
func preTokenize(text string, pre preTokenizer) ([]string, error) {
	cp := decodeLenient(text)
	for _, c := range cp {
		if c > unicode.MaxRune {
			return nil, fmt.Errorf("%w: code point above U+10FFFF in %q", ErrText, truncate(text))
		}
	}
	var words []string
	var buf []byte
	word := func(w []rune) {
		buf = buf[:0]
		for _, c := range w {
			buf, _ = appendUTF8(buf, c)
		}
		words = append(words, encodeByteLevel(string(buf)))
	}
	switch pre {
	case preSmolLM:
		start := 0
		for i, c := range cp {
			if classOf(c)&cNumber != 0 {
				splitGPT2(cp[start:i], word)
				word(cp[i : i+1])
				start = i + 1
			}
		}
		splitGPT2(cp[start:], word)
	default:
		splitLlama3(cp, word)
	}
	return words, nil
}

// splitter walks one piece's code points, calling emit with every word cut
// so far when asked to end one at a position.
type splitter struct {
	cp   []rune
	prev int
	emit func([]rune)
}

// class is the class of the code point at p, 0 outside the piece.
func (s *splitter) class(p int) uint8 {
	if p >= 0 && p < len(s.cp) {
		return classOf(s.cp[p])
	}
	return 0
}

// at is the code point at p, -1 outside the piece.
func (s *splitter) at(p int) rune {
	if p >= 0 && p < len(s.cp) {
		return s.cp[p]
	}
	return -1
}

// cut ends a word at end and returns its length in code points.
func (s *splitter) cut(end int) int {
	l := end - s.prev
	if l > 0 {
		s.emit(s.cp[s.prev:end])
	}
	s.prev = end
	return l
}

// spaces handles the whitespace alternatives every pre-tokenizer ends
// with at pos, \s+(?!\S) then \s+ (Llama 3 first takes \s*[\r\n]+, when
// crlf is set), or a single code point nothing else matched; it returns
// the next position.
func (s *splitter) spaces(pos int, crlf bool) int {
	n, lastCRLF := 0, 0
	for s.class(pos+n)&cSpace != 0 {
		if c := s.cp[pos+n]; crlf && (c == '\r' || c == '\n') {
			lastCRLF = pos + n + 1
		}
		n++
	}
	switch {
	case lastCRLF > 0:
		pos = lastCRLF
	case n > 1 && pos+n < len(s.cp):
		pos += n - 1 // \s+(?!\S): leave the last space to the next word
	case n > 0:
		pos += n
	default:
		pos++
	}
	s.cut(pos)
	return pos
}

// splitLlama3 cuts cp as Llama 3's pre-tokenizer regex does,
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// by hand (Go's regexp has no lookahead), trying the alternatives in
// order at each position as llama.cpp's own splitter does.
func splitLlama3(cp []rune, emit func([]rune)) {
	s := &splitter{cp: cp, emit: emit}
	n := len(cp)
	crlf := func(c rune) bool { return c == '\r' || c == '\n' }
	for pos := 0; pos < n; {
		c, f := cp[pos], s.class(pos)
		if c == '\'' && pos+1 < n {
			switch unicode.ToLower(cp[pos+1]) {
			case 's', 't', 'm', 'd':
				pos += s.cut(pos + 2)
				continue
			}
			if pos+2 < n {
				x := string([]rune{unicode.ToLower(cp[pos+1]), unicode.ToLower(cp[pos+2])})
				if x == "re" || x == "ve" || x == "ll" {
					pos += s.cut(pos + 3)
					continue
				}
			}
		}
		if !crlf(c) && f&cNumber == 0 && (f&cLetter != 0 || s.class(pos+1)&cLetter != 0) {
			pos++
			for s.class(pos)&cLetter != 0 {
				pos++
			}
			s.cut(pos)
			continue
		}
		if f&cNumber != 0 {
			for ini := pos; s.class(pos)&cNumber != 0; {
				if pos++; pos-ini >= 3 {
					s.cut(pos)
					ini = pos
				}
			}
			s.cut(pos)
			continue
		}
		f2 := f
		if c == ' ' {
			f2 = s.class(pos + 1)
		}
		if f2&(cSpace|cLetter|cNumber) == 0 && f2 != 0 {
			if c == ' ' {
				pos++
			}
			for f2&(cSpace|cLetter|cNumber) == 0 && f2 != 0 {
				pos++
				f2 = s.class(pos)
			}
			for crlf(s.at(pos)) {
				pos++
			}
			s.cut(pos)
			continue
		}
		pos = s.spaces(pos, true)
	}
}

// splitGPT2 cuts cp as GPT-2's pre-tokenizer regex does,
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// (the contractions in lower case only), as llama.cpp's splitter for it.
func splitGPT2(cp []rune, emit func([]rune)) {
	s := &splitter{cp: cp, emit: emit}
	n := len(cp)
	for pos := 0; pos < n; {
		c := cp[pos]
		if c == '\'' && pos+1 < n {
			switch cp[pos+1] {
			case 's', 't', 'm', 'd':
				pos += s.cut(pos + 2)
				continue
			}
			if pos+2 < n {
				if x := string(cp[pos+1 : pos+3]); x == "re" || x == "ve" || x == "ll" {
					pos += s.cut(pos + 3)
					continue
				}
			}
		}
		f2 := s.class(pos)
		if c == ' ' {
			f2 = s.class(pos + 1)
		}
		// One class after an optional space: letters, numbers, or
		// neither (and not whitespace).
		run := uint8(0)
		switch {
		case f2&cLetter != 0:
			run = cLetter
		case f2&cNumber != 0:
			run = cNumber
		case f2&(cSpace|cLetter|cNumber) == 0 && f2 != 0:
			run = cAny
		}
		if run != 0 {
			if c == ' ' {
				pos++
			}
			in := func(f uint8) bool {
				if run == cAny {
					return f&(cSpace|cLetter|cNumber) == 0 && f != 0
				}
				return f&run != 0
			}
			for in(s.class(pos)) {
				pos++
			}
			s.cut(pos)
			continue
		}
		pos = s.spaces(pos, false)
	}
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return strings.Clone(s)
}
