// Command gengrids writes quant/grids_gen.go, the codebooks of ggml's lattice
// formats, derived from the real library by package grids.
//
// Usage (from package quant, as its go:generate line does):
//
//	GGML_REF_LIB_DIR=/path/to/bins/linux-x64 go run ./internal/gengrids -o grids_gen.go
package main

import (
	"flag"
	"log"
	"os"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/quant/internal/grids"
)

func main() {
	out := flag.String("o", "grids_gen.go", "output file")
	flag.Parse()
	lib, err := ggmlref.Default()
	if err != nil {
		log.Fatal(err)
	}
	src, err := grids.Generate(lib)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
