//go:build !amd64 || purego

package cpuid

const hasF16C = false
