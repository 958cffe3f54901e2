package tokenizer

import (
	"container/heap"
	"fmt"
)

// symbol is a run of the text being merged, linked to its neighbours; n
// 0 marks one merged into its left neighbour.
type symbol struct {
	start, n   int
	prev, next int
}

// bigram is a candidate merge of symbols left and right (adjacent when
// pushed): its score (SentencePiece) or rank (BPE), and the merged size
// or text to recognise a stale candidate by.
type bigram struct {
	left, right int
	score       float32
	rank        int32
	size        int
	text        string
}

// queue holds the candidate merges: SentencePiece pops the highest score
// first, BPE the lowest rank; ties go to the leftmost pair.
type queue struct {
	items  []bigram
	byRank bool
}

func (q *queue) Len() int { return len(q.items) }
func (q *queue) Less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	if q.byRank {
		return a.rank < b.rank || (a.rank == b.rank && a.left < b.left)
	}
	return a.score > b.score || (a.score == b.score && a.left < b.left)
}
func (q *queue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *queue) Push(x any)    { q.items = append(q.items, x.(bigram)) }
func (q *queue) Pop() any {
	b := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return b
}

// join merges symbol r into its left neighbour l and unlinks it.
func join(syms []symbol, l, r int) {
	syms[l].n += syms[r].n
	syms[r].n = 0
	syms[l].next = syms[r].next
	if syms[r].next >= 0 {
		syms[syms[r].next].prev = l
	}
}

// utf8Len is the length llama.cpp gives a UTF-8 sequence from its first
// byte alone (continuation and invalid bytes count as one).
func utf8Len(b byte) int {
	return [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[b>>4]
}

// splitChars cuts text into symbols of one UTF-8 sequence each.
func splitChars(text string) []symbol {
	syms := make([]symbol, 0, len(text))
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		syms = append(syms, symbol{start: off, n: n, prev: len(syms) - 1, next: len(syms) + 1})
		off += n
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	return syms
}

// encodeSPM appends the SentencePiece tokens of text (spaces already
// "▁"): starting from single characters, the adjacent pair whose
// concatenation is the best-scoring token merges until none is a token;
// symbols that are no token become their bytes' <0xXX> tokens.
func (t *Tokenizer) encodeSPM(text string, out []int32) ([]int32, error) {
	syms := splitChars(text)
	q := &queue{}
	try := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		s := text[syms[l].start : syms[l].start+syms[l].n+syms[r].n]
		id, ok := t.index[s]
		if !ok {
			return
		}
		var score float32
		if t.scores != nil {
			score = t.scores[id]
		}
		heap.Push(q, bigram{left: l, right: r, score: score, size: len(s)})
	}
	for i := 1; i < len(syms); i++ {
		try(i-1, i)
	}
	for q.Len() > 0 {
		b := heap.Pop(q).(bigram)
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		join(syms, b.left, b.right)
		try(l.prev, b.left)
		try(b.left, l.next)
	}
	for i := 0; i >= 0 && i < len(syms); i = syms[i].next {
		s := text[syms[i].start : syms[i].start+syms[i].n]
		if id, ok := t.index[s]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(s); j++ {
			id, err := t.byteToken(s[j])
			if err != nil {
				return nil, err
			}
			out = append(out, id)
		}
	}
	return out, nil
}

// byteToken is the token of byte c: <0xXX>, else the one-byte text.
func (t *Tokenizer) byteToken(c byte) (int32, error) {
	const hex = "0123456789ABCDEF"
	if id, ok := t.index[string([]byte{'<', '0', 'x', hex[c>>4], hex[c&15], '>'})]; ok {
		return id, nil
	}
	if id, ok := t.index[string([]byte{c})]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("%w: byte 0x%02X has no token", ErrText, c)
}
