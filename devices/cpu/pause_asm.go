//go:build (amd64 || arm64) && !purego

package cpu

// pause tells the core that this thread is spinning (x86 PAUSE, arm64
// YIELD), which saves power and lets a sibling hyperthread run.
//
//go:noescape
func pause()
