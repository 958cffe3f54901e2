package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ggml-go/ggml/bench"
)

func runBenchOps(args []string, stdout io.Writer) error {
	var names string
	return runSpeed("ops", "Element-wise and softmax operations alone at the sizes of a 64-token prompt of the real models:\n"+
		"SOFT_MAX of 256 keys by 9 heads with a causal F16 mask, SWIGLU and SILU of 1536 features, GEGLU of 2048.",
		args, stdout, "1,2",
		func(fs *flag.FlagSet) {
			fs.StringVar(&names, "ops", strings.Join(bench.OpNames, ","), "operations, comma-separated")
		},
		func(threads []int) ([]speedCase, error) {
			var cs []speedCase
			for _, name := range strings.Split(names, ",") {
				w, err := bench.Op(name)
				if err != nil {
					return nil, usageErrorf("-ops: %v", err)
				}
				for _, th := range threads {
					cs = append(cs, func(s bench.Setup) (bench.Case, error) {
						return s.Graph(fmt.Sprintf("op %s x%d", name, 64), th, 1, w)
					})
				}
			}
			return cs, nil
		})
}
