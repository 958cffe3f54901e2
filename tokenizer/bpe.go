package tokenizer

import (
	"container/heap"
	"fmt"
	"strings"
)

// byteRunes is GPT-2's byte-to-unicode mapping: printable bytes stand for
// themselves, the others (controls, space, 127-160, 173) for U+0100 on in
// byte order, so every byte string is a string of visible characters.
var byteRunes, runeBytes = func() ([256]rune, map[rune]byte) {
	var to [256]rune
	from := make(map[rune]byte, 256)
	next := rune(256)
	for b := range 256 {
		r := rune(b)
		if !(b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE) {
			r = next
			next++
		}
		to[b] = r
		from[r] = byte(b)
	}
	return to, from
}()

// encodeByteLevel maps each byte of s to its character.
func encodeByteLevel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteRunes[s[i]])
	}
	return b.String()
}

// decodeByteLevel maps a token's characters back to bytes; a character
// outside the mapping becomes llama.cpp's "[UNK_BYTE_0x<hex><token>]".
func decodeByteLevel(s string) string {
	var b strings.Builder
	for _, c := range decodeLenient(s) {
		if x, ok := runeBytes[c]; ok {
			b.WriteByte(x)
			continue
		}
		u, _ := appendUTF8(nil, c)
		fmt.Fprintf(&b, "[UNK_BYTE_0x%x%s]", u, s)
	}
	return b.String()
}

// encodeBPE appends the byte-level BPE tokens of text: pre-tokenized into
// words, each word's characters merged by the best-ranked merge until
// none applies (a word that is a token stays whole: Llama 3 ignores
// merges then). Pieces that are no token become their one-byte tokens,
// or nothing, as in llama.cpp.
func (t *Tokenizer) encodeBPE(text string, out []int32) ([]int32, error) {
	words, err := preTokenize(text, t.pre)
	if err != nil {
		return nil, err
	}
	for _, w := range words {
		if id, ok := t.index[w]; ok && t.ignoreMerges {
			out = append(out, id)
			continue
		}
		syms := splitChars(w)
		q := &queue{byRank: true}
		text := func(i int) string { return w[syms[i].start : syms[i].start+syms[i].n] }
		try := func(l, r int) {
			if l < 0 || r < 0 {
				return
			}
			a, b := text(l), text(r)
			if rank, ok := t.ranks[pair{a, b}]; ok {
				heap.Push(q, bigram{left: l, right: r, rank: rank, text: a + b})
			}
		}
		for i := 1; i < len(syms); i++ {
			try(i-1, i)
		}
		for q.Len() > 0 {
			b := heap.Pop(q).(bigram)
			l, r := &syms[b.left], &syms[b.right]
			if l.n == 0 || r.n == 0 || l.n+r.n != len(b.text) || text(b.left)+text(b.right) != b.text {
				continue
			}
			join(syms, b.left, b.right)
			try(l.prev, b.left)
			try(b.left, l.next)
		}
		for i := range syms {
			if syms[i].n == 0 {
				continue
			}
			s := text(i)
			if id, ok := t.index[s]; ok {
				out = append(out, id)
				continue
			}
			for j := 0; j < len(s); j++ {
				if id, ok := t.index[s[j:j+1]]; ok {
					out = append(out, id)
				}
			}
		}
	}
	return out, nil
}
