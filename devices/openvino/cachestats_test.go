package openvino

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCacheStats: CacheStats counts a miss (and its compile time) per
// graph structure and a hit per GraphCompute that reused one, and the
// host time of the hits leaves the infer out: on a graph whose infer
// dominates (an ADD of 2x2^18 floats), the hits' host time is a small
// part of their GraphCompute time.
func TestCacheStats(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{})
	be := newBackend(dev)
	defer be.Close()
	s0 := dev.CacheStats()
	big, _, _, _ := addGraph(t, dev, 1<<18)
	small, _, _, _ := addGraph(t, dev, 16)
	require.NoError(t, be.GraphCompute(big))
	var hitsWall time.Duration
	for range 3 {
		t0 := time.Now()
		require.NoError(t, be.GraphCompute(big))
		hitsWall += time.Since(t0)
	}
	require.NoError(t, be.GraphCompute(small))
	require.NoError(t, be.GraphCompute(small))
	s := dev.CacheStats()
	require.Equal(t, 2, s.Misses-s0.Misses, "one compile per structure")
	require.Equal(t, 4, s.Hits-s0.Hits)
	require.Len(t, s.Compiles, len(s0.Compiles)+2)
	for _, c := range s.Compiles[len(s0.Compiles):] {
		require.Positive(t, c)
	}
	host := s.HitHost - s0.HitHost
	require.Positive(t, host)
	require.Less(t, host, hitsWall/2, "the hits' host time must leave the infer out (hits took %v)", hitsWall)
	require.LessOrEqual(t, s.HitCopy-s0.HitCopy, host, "the copies out are part of the host time")
	// A copy: the caller cannot change the device's record.
	s.Compiles[0] = -1
	require.NotEqual(t, time.Duration(-1), dev.CacheStats().Compiles[0])
}
