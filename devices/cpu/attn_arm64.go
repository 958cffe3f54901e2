//go:build !purego

package cpu

// Flash attention's F16 steps in one assembly call per query row instead
// of one primitive call per key (attn_arm64.s; newAsmVec wraps them). The
// assembly checks every key against the rows the data holds before it
// reads the row.

//go:noescape
func attnScoresF16NEON(out, qf *float32, k *byte, stride uintptr, keys *int32, n, d, rows int, mvs *float32, newMax *bool, scale float32) (bad int, m float32)

//go:noescape
func attnAccF16NEON(acc *uint16, d int, v *byte, stride uintptr, keys *int32, ex *float32, newMax *bool, n, rows int) (bad int, sum float32)
