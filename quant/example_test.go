package quant_test

import (
	"fmt"
	"math"

	"github.com/ggml-go/ggml/quant"
)

// Quantize a weight matrix to several formats and measure what each costs
// in size and error, as ggml's quantize tool reports it.
func ExampleQuantize() {
	const rows, cols = 8, 512
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(math.Sin(float64(i)*0.37) * math.Cos(float64(i)*0.011))
	}
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q4_K, quant.IQ4_XS} {
		q, err := quant.Quantize(typ, w, rows, cols, nil) // no importance matrix
		if err != nil {
			fmt.Println(err)
			return
		}
		back, err := quant.Dequantize(typ, q, len(w))
		if err != nil {
			fmt.Println(err)
			return
		}
		var sum float64
		for i := range w {
			d := float64(back[i] - w[i])
			sum += d * d
		}
		bpw := float64(8*len(q)) / float64(len(w))
		fmt.Printf("%-7s %5d bytes, %.2f bits per weight, RMSE %.4f\n", typ, len(q), bpw, math.Sqrt(sum/float64(len(w))))
	}
	// Output:
	// q8_0     4352 bytes, 8.50 bits per weight, RMSE 0.0017
	// q4_0     2304 bytes, 4.50 bits per weight, RMSE 0.0310
	// q4_K     2304 bytes, 4.50 bits per weight, RMSE 0.0257
	// iq4_xs   2176 bytes, 4.25 bits per weight, RMSE 0.0309
}
