package tokenizer

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestRealTokenizerIDs checks the vocabularies as npmvocab builds them
// (LLaMA 2's scores are derived, not stored in the package) against the
// token ids the packages' own tests expect from Meta's tokenizers.
func TestRealTokenizerIDs(t *testing.T) {
	for _, c := range []struct {
		vocab      string
		addSpecial bool
		text       string
		want       []int32
	}{
		{"spm", true, "grabbed", []int32{1, 2646, 1327, 287}},
		{"spm", true, " grabbed", []int32{1, 29871, 2646, 1327, 287}},
		{"spm", true, "           grabbed", []int32{1, 9651, 2646, 1327, 287}},
		{"spm", true, "\n", []int32{1, 29871, 13}},
		{"spm", true, " \n", []int32{1, 259, 13}},
		{"spm", true, "\ttabs\t\t\t\tout here", []int32{1, 29871, 12, 21175, 12, 12, 12, 12, 449, 1244}},
		{"spm", true, "ax\n####\nboo", []int32{1, 4853, 13, 4136, 13, 833, 29877}},
		{"spm", true, "镇", []int32{1, 29871, 30411}},
		{"spm", true, "🦙Ꙋ", []int32{1, 29871, 243, 162, 169, 156, 237, 156, 141}},
		{"bpe", false, "grabbed", []int32{59312, 2788}},
		{"bpe", false, "           grabbed", []int32{1881, 30418}},
		{"bpe", false, " \n", []int32{720}},
		{"bpe", false, "\ttabs\t\t\t\tout here", []int32{3324, 3518, 573, 14294, 1618}},
		{"bpe", false, "ax\n####\nboo", []int32{710, 198, 71050, 34093}},
		{"bpe", false, "镇", []int32{104643}},
		{"bpe", false, "Ꙋ🦙", []int32{166, 247, 232, 9468, 99, 247}},
		{"bpe", false, "This is a test sentence.", []int32{2028, 374, 264, 1296, 11914, 13}},
		{"bpe", true, "I", []int32{128000, 40}},
		{"bpe", false, "<|start_header_id|>This text has special tokens<|eom_id|> in the middle of it.<|end_header_id|><|eot_id|>",
			[]int32{128006, 2028, 1495, 706, 3361, 11460, 128008, 304, 279, 6278, 315, 433, 13, 128007, 128009}},
	} {
		m := model(t, c.vocab)
		got, err := m.tok.Encode(c.text, c.addSpecial, true)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %q: got %v, the real tokenizer %v", c.vocab, c.text, got, c.want)
		}
	}
}

// corpus is the committed text: one test line per line.
func corpus(t testing.TB) []string {
	f, err := os.Open("testdata/corpus.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	s := bufio.NewScanner(z)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// testSeed is GGML_TEST_SEED, else the time: generated text differs per run.
func testSeed(t testing.TB) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GGML_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("GGML_TEST_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (GGML_TEST_SEED to repeat)", seed)
	return seed
}

// Pieces generated lines are made of: each draws one item from its class.
var genClasses = []func(r *rand.Rand) string{
	func(r *rand.Rand) string { // ASCII words, with case and contractions
		w := []string{"the", "The", "LLAMA", "tokenizer", "it", "'s", "'S", "'ll", "'RE", "'ve", "'d", "'m", "'t", "don't", "x", "Hello", "über", "naïve"}
		return w[r.IntN(len(w))]
	},
	func(r *rand.Rand) string { return strconv.Itoa(r.IntN(10_000_000)) },
	func(r *rand.Rand) string { // whitespace runs
		ws := []string{" ", " ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", "\u1680", "\u200a", "\v", "\f", "\x1c", "\u0085", "    \n  "}
		var b strings.Builder
		for range 1 + r.IntN(4) {
			b.WriteString(ws[r.IntN(len(ws))])
		}
		return b.String()
	},
	func(r *rand.Rand) string { return runes(r, 0x4E00, 0x9FFF, 1+r.IntN(6)) },   // CJK
	func(r *rand.Rand) string { return runes(r, 0xAC00, 0xD7A3, 1+r.IntN(4)) },   // Hangul
	func(r *rand.Rand) string { return runes(r, 0x3040, 0x30FF, 1+r.IntN(5)) },   // kana
	func(r *rand.Rand) string { return runes(r, 0x0400, 0x04FF, 1+r.IntN(8)) },   // Cyrillic
	func(r *rand.Rand) string { return runes(r, 0x0600, 0x06FF, 1+r.IntN(6)) },   // Arabic
	func(r *rand.Rand) string { return runes(r, 0x0900, 0x097F, 1+r.IntN(6)) },   // Devanagari
	func(r *rand.Rand) string { return runes(r, 0x1F300, 0x1FAFF, 1+r.IntN(3)) }, // emoji
	func(r *rand.Rand) string { // emoji sequences: ZWJ, skin tones, flags, keycaps
		e := []string{"👩‍💻", "👍🏽", "🇫🇷", "1️⃣", "❤️", "🏳️‍🌈", "👨‍👩‍👧‍👦"}
		return e[r.IntN(len(e))]
	},
	func(r *rand.Rand) string { // letters with combining marks
		return runes(r, 'a', 'z', 1) + runes(r, 0x0300, 0x036F, 1+r.IntN(3))
	},
	func(r *rand.Rand) string {
		return runes(r, 0x21, 0x2F, 1+r.IntN(4)) + runes(r, 0x2010, 0x205E, r.IntN(2))
	}, // punctuation
	func(r *rand.Rand) string { // digits of other scripts, fractions, roman numerals
		return runes(r, 0x0660, 0x0669, 1+r.IntN(5)) + runes(r, 0x00BC, 0x00BE, r.IntN(2)) + runes(r, 0x2160, 0x216F, r.IntN(2))
	},
	func(r *rand.Rand) string { // special-token texts, real and near misses
		s := []string{"<s>", "</s>", "<unk>", "<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>",
			"<|reserved_special_token_17|>", "<|reserved_special_token_250|>", "<|eot_id", "<s", "▁", "▁▁x", "<0x41>"}
		return s[r.IntN(len(s))]
	},
	func(r *rand.Rand) string { // bytes that are not UTF-8 (never above U+10FFFF: libllama aborts there)
		b := []string{"\x80", "\xbf", "\xc3", "\xe2\x96", "\xff", "\xf0\x9f", "\xc0\x80", "\xed\xa0\x80"}
		return b[r.IntN(len(b))]
	},
}

func runes(r *rand.Rand, lo, hi rune, n int) string {
	var b strings.Builder
	for range n {
		b.WriteRune(lo + rune(r.IntN(int(hi-lo+1))))
	}
	return b.String()
}

// generated returns n lines of random pieces.
func generated(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 7))
	lines := make([]string, n)
	for i := range lines {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(genClasses[r.IntN(len(genClasses))](r))
			if r.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		lines[i] = b.String()
	}
	return lines
}

// compare checks Encode against llama_tokenize on every line and returns
// the number of mismatches (at most 10 reported).
func compare(t *testing.T, m *vocabModel, lines []string, addSpecial, parseSpecial bool) int {
	t.Helper()
	bad := 0
	for _, s := range lines {
		got, err := m.tok.Encode(s, addSpecial, parseSpecial)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want, err := m.ref.Tokenize(s, addSpecial, parseSpecial)
		if err != nil {
			t.Fatalf("libllama %q: %v", s, err)
		}
		if !slices.Equal(got, want) {
			if bad++; bad <= 10 {
				t.Errorf("%q (add %v, parse %v): got %v, libllama %v", s, addSpecial, parseSpecial, got, want)
			}
		}
	}
	return bad
}

// TestEncodeMatchesLlama compares Encode with libllama on the committed
// corpus (each line, and runs of 20 lines joined by newlines) and on
// generated Unicode with special-token parsing off and on.
func TestEncodeMatchesLlama(t *testing.T) {
	lines := corpus(t)
	var chunks []string
	for i := 0; i < len(lines); i += 20 {
		chunks = append(chunks, strings.Join(lines[i:min(i+20, len(lines))], "\n"))
	}
	gen := generated(testSeed(t), 3000)
	if testing.Short() { // the race detector's run: a tenth
		lines, chunks, gen = every(lines, 10), every(chunks, 10), every(gen, 10)
	}
	for _, name := range []string{"spm", "bpe", "smollm2", "gemma3"} {
		t.Run(name, func(t *testing.T) {
			m := withRef(t, name)
			bad := compare(t, m, lines, true, false) + compare(t, m, chunks, false, false)
			bad += compare(t, m, gen, true, false) + compare(t, m, gen, false, true)
			t.Logf("%s: %d corpus lines, %d chunks, %d generated lines twice: %d mismatches",
				name, len(lines), len(chunks), len(gen), bad)
		})
	}
}

func every(s []string, n int) []string {
	var out []string
	for i := 0; i < len(s); i += n {
		out = append(out, s[i])
	}
	return out
}

// TestVariantsMatchLlama compares on vocabularies changed to exercise
// user-defined tokens, add_eos, add_bos off and no space prefix.
func TestVariantsMatchLlama(t *testing.T) {
	lines := corpus(t)[:3000]
	all := generated(testSeed(t), 1000)
	for _, base := range []string{"spm", "bpe"} {
		gen := slices.Clone(all)
		for i, s := range gen[:300] {
			gen[i] = s + userDefined[base][i%4] // every user-defined token shows up
		}
		t.Run(base, func(t *testing.T) {
			m := withRef(t, base+"-variant")
			if m.tok.AddBOS() != (base == "spm") || !m.tok.AddEOS() {
				t.Fatalf("add_bos %v, add_eos %v", m.tok.AddBOS(), m.tok.AddEOS())
			}
			bad := compare(t, m, lines, true, false) + compare(t, m, gen, true, false) + compare(t, m, gen, true, true)
			for id := range int32(m.tok.NumTokens()) {
				want, err := m.ref.TokenToPiece(id, 0, false)
				if err != nil {
					t.Fatal(err)
				}
				if got := m.tok.TokenToPiece(id, false); got != want {
					if bad++; bad <= 10 {
						t.Errorf("token %d: %q, libllama %q", id, got, want)
					}
				}
			}
			t.Logf("%s variant: %d corpus lines, %d generated lines twice, %d pieces: %d mismatches",
				base, len(lines), len(gen), m.tok.NumTokens(), bad)
		})
	}
}

// TestTokenToPieceMatchesLlama compares every token's piece, special on and
// off, and a sample with lstrip 1, the special ids and IsEOG.
func TestTokenToPieceMatchesLlama(t *testing.T) {
	for _, name := range []string{"spm", "bpe", "smollm2", "gemma3"} {
		t.Run(name, func(t *testing.T) {
			m := withRef(t, name)
			if m.tok.NumTokens() != m.ref.NVocab() || m.tok.BOS() != m.ref.BOS() || m.tok.EOS() != m.ref.EOS() {
				t.Fatalf("n_vocab %d, bos %d, eos %d; libllama %d, %d, %d", m.tok.NumTokens(), m.tok.BOS(), m.tok.EOS(),
					m.ref.NVocab(), m.ref.BOS(), m.ref.EOS())
			}
			bad := 0
			check := func(id int32, lstrip int, special bool) {
				want, err := m.ref.TokenToPiece(id, lstrip, special)
				if err != nil {
					t.Fatal(err)
				}
				if got := m.tok.piece(id, lstrip, special); got != want {
					if bad++; bad <= 10 {
						t.Errorf("token %d (lstrip %d, special %v): %q, libllama %q", id, lstrip, special, got, want)
					}
				}
			}
			if eot, ref := m.tok.EOT(), m.ref.EOT(); eot != ref && !(m.tok.IsEOG(ref) && slices.Contains(eotTexts, m.tok.tokens[ref])) {
				// Among several end-of-turn texts libllama takes the
				// one its hash map yields first (see findEOG).
				t.Errorf("eot %d, libllama %d", eot, ref)
			}
			eog := 0
			for id := range int32(m.tok.NumTokens()) {
				if m.tok.IsEOG(id) != m.ref.IsEOG(id) {
					t.Errorf("token %d: IsEOG %v, libllama %v", id, m.tok.IsEOG(id), m.ref.IsEOG(id))
				}
				if m.tok.IsEOG(id) {
					eog++
				}
				check(id, 0, true)
				check(id, 0, false)
				if id%7 == 0 {
					check(id, 1, false)
				}
			}
			t.Logf("%s: %d tokens (%d end generation): %d mismatches", name, m.tok.NumTokens(), eog, bad)
		})
	}
}

// TestRoundTrip checks Decode(Encode(s)) == s on the corpus and on valid
// generated text where the algorithm keeps every byte: valid UTF-8 (BPE
// replaces invalid bytes with U+FFFD; SentencePiece keeps them as byte
// tokens, but a broken sequence can swallow the "▁" of a following space,
// which then decodes as "▁"), and for SentencePiece no "▁", which it
// cannot tell from a space. Special-token texts stay text with parseSpecial
// off.
func TestRoundTrip(t *testing.T) {
	lines := append(corpus(t), generated(testSeed(t), 2000)...)
	for _, name := range []string{"spm", "bpe", "smollm2", "gemma3"} {
		m := model(t, name)
		n := 0
		for _, s := range lines {
			if !roundTrips(m.tok, s) {
				continue
			}
			n++
			ids, err := m.tok.Encode(s, true, false)
			if err != nil {
				t.Fatal(err)
			}
			back, err := m.tok.Decode(ids)
			if err != nil {
				t.Fatal(err)
			}
			if back != s {
				t.Fatalf("%s: %q decodes to %q", name, s, back)
			}
		}
		t.Logf("%s: %d lines round trip", name, n)
	}
}

// roundTrips reports whether the tokenizer promises to give s back.
func roundTrips(tok *Tokenizer, s string) bool {
	return utf8.ValidString(s) && (tok.kind != spm || !strings.Contains(s, "▁"))
}

// FuzzEncode: no panic on any input, and round trips where promised.
func FuzzEncode(f *testing.F) {
	for _, s := range generated(1, 50) {
		f.Add(s, false)
	}
	f.Add("\xf4\x90\x80\x80 above U+10FFFF", true)
	for _, name := range []string{"spm", "bpe"} {
		model(f, name)
	}
	f.Fuzz(func(t *testing.T, s string, parseSpecial bool) {
		for _, name := range []string{"spm", "bpe"} {
			tok := models[name].tok
			ids, err := tok.Encode(s, true, parseSpecial)
			if err != nil {
				continue // only text libllama itself cannot take
			}
			back, err := tok.Decode(ids)
			if err != nil {
				t.Fatal(err)
			}
			if !parseSpecial && roundTrips(tok, s) && back != s {
				t.Fatalf("%s: %q decodes to %q", name, s, back)
			}
			for _, id := range ids {
				if id < 0 || int(id) >= tok.NumTokens() {
					t.Fatal(fmt.Sprintf("%s: token %d out of range", name, id))
				}
			}
		}
	})
}

// BenchmarkEncode tokenizes the corpus, ours and libllama's side by side
// (libllama's time includes a purego call per line, ~0.1 µs of several).
func BenchmarkEncode(b *testing.B) {
	lines := corpus(b)
	bytes := 0
	for _, s := range lines {
		bytes += len(s)
	}
	for _, name := range []string{"spm", "bpe"} {
		m := withRef(b, name)
		for _, impl := range []string{"go", "libllama"} {
			b.Run(name+"/"+impl, func(b *testing.B) {
				b.SetBytes(int64(bytes))
				for b.Loop() {
					for _, s := range lines {
						var err error
						if impl == "go" {
							_, err = m.tok.Encode(s, true, false)
						} else {
							_, err = m.ref.Tokenize(s, true, false)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// TestEveryCodePoint runs every code point through the Llama 3
// pre-tokenizer beside letters, digits, spaces and punctuation, for a
// difference between Go's Unicode tables (letter, number, White_Space) and
// llama.cpp's. Its limit: token ids show a different split only where
// some merge crosses it, which for rare multi-byte characters is seldom
// (a letter wrongly classed punctuation in U+2E80 passes unnoticed).
func TestEveryCodePoint(t *testing.T) {
	m := withRef(t, "bpe")
	step := 1
	if testing.Short() {
		step = 17
	}
	bad, lines := 0, 0
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			lines++
			bad += compare(t, m, []string{b.String()}, false, false)
			b.Reset()
		}
	}
	for c := rune(0); c <= 0x10FFFF; c += rune(step) {
		if c >= 0xD800 && c <= 0xDFFF {
			continue // not valid in Go strings; the generated text has them as raw bytes
		}
		if c >= 0x40000 && c < 0xE0000 {
			c = 0xE0000 // unassigned planes: one class; plane 14 has tags and selectors
		}
		s := string(c)
		b.WriteString("a" + s + "1" + s + " " + s + "!" + s + "\n" + s + "'" + s + "  ")
		if b.Len() > 2000 {
			flush()
		}
	}
	flush()
	t.Logf("%d lines over the code points: %d mismatches", lines, bad)
}
