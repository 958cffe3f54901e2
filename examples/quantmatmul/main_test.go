package main

// The program runs: the weights' row sums, 31.5 - 16i exactly, moved by
// Q4_0's and Q8_0's rounding (backend's TestLoadWeights holds such a
// product to the dequantized weights' on random data). Only the CPU device
// is linked, so the best device is the CPU.
func Example_main() {
	main()
	// Output: [31.37 15.67 -0.25 -16.06] on CPU
}
