package optest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
)

// TestCPUSelfConsistent runs the quick cases with our CPU device against
// itself on 1 and 3 threads: results must not depend on the thread count.
func TestCPUSelfConsistent(t *testing.T) {
	one := cpu.New(cpu.Options{Threads: 1})
	defer one.Close()
	three := cpu.New(cpu.Options{Threads: 3})
	defer three.Close()
	cases := Cases(false, nil)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		r := Run(c, CPU{three}, CPU{one}, 1)
		require.NotEqual(t, Failed, r.Status, "%s: %s", c.Name, r.Detail)
	}
}
