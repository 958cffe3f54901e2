// Command genunrolled writes quant/dot_prepared_gen.go (see package
// unroll).
//
// Usage (from package quant, as its go:generate line does):
//
//	go run ./internal/genunrolled -o dot_prepared_gen.go
package main

import (
	"flag"
	"log"
	"os"

	"github.com/ggml-go/ggml/quant/internal/unroll"
)

func main() {
	out := flag.String("o", "dot_prepared_gen.go", "output file")
	flag.Parse()
	src, err := unroll.Generate()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
