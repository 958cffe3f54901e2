package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSumWords: the sum of every word, through sumStreams (from 64 words
// where the processor has it) and the scalar tail.
func TestSumWords(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 100, 1000, 4096 + 77} {
		b := make([]uint64, n)
		want := uint64(0)
		for i := range b {
			b[i] = uint64(i*i + 3)
			want += b[i]
		}
		require.Equal(t, want, sumWords(b), "n=%d", n)
	}
}

// TestReadBandwidth: a figure in the range of real memory systems (100
// MB/s to 10 TB/s) for one and two threads, and errors for what cannot be
// measured.
func TestReadBandwidth(t *testing.T) {
	for _, threads := range []int{1, 2} {
		bw, err := ReadBandwidth(threads, 16<<20, 2)
		require.NoError(t, err)
		require.Greater(t, bw, 1e8)
		require.Less(t, bw, 1e13)
	}
	_, err := ReadBandwidth(0, 1<<20, 1)
	require.Error(t, err)
	_, err = ReadBandwidth(4, 4096, 1)
	require.Error(t, err)
	_, err = ReadBandwidth(1, 1<<20, 0)
	require.Error(t, err)
}
