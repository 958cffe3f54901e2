package tokenizer

import (
	"slices"
	"testing"
)

func TestSmoke(t *testing.T) {
	for _, name := range []string{"spm", "bpe"} {
		m := withRef(t, name)
		for _, s := range []string{"grabbed", " grabbed", "           grabbed", "\n", " \n", "\ttabs\t\t\t\tout here", "ax\n####\nboo", "镇", "🦙", "🦙Ꙋ", "Hello world, it's 12345 o'clock!!\r\n\n  x", "<s>a</s><|eot_id|>b", "  \u00a0 x\u3000y"} {
			for _, sp := range []bool{false, true} {
				got, err := m.tok.Encode(s, true, sp)
				if err != nil {
					t.Fatal(err)
				}
				want, err := m.ref.Tokenize(s, true, sp)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s %q %v: got %v want %v", name, s, sp, got, want)
				}
			}
		}
	}
}
