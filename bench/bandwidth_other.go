//go:build !amd64 || purego

package bench

// sumStreams has no vector form here: sumWords reads in Go.
var sumStreams func(p *uint64, q int) uint64
