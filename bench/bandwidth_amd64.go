//go:build !purego

package bench

import "golang.org/x/sys/cpu"

// sumStreamsAVX2 is in bandwidth_amd64.s.
//
//go:noescape
func sumStreamsAVX2(p *uint64, q int) uint64

// sumStreams is sumStreamsAVX2 where the processor has AVX2.
var sumStreams = func() func(p *uint64, q int) uint64 {
	if cpu.X86.HasAVX2 {
		return sumStreamsAVX2
	}
	return nil
}()
