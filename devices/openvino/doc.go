// Package openvino is the OpenVINO device: ggml graphs run on Intel CPUs,
// GPUs and NPUs through libopenvino_c, loaded at run time with purego (no
// cgo). It reimplements upstream ggml-openvino: ggml's
// src/ggml-openvino/ggml-openvino.cpp as crates.io sipp-sys 0.1.4 ships it,
// slightly newer than ggml-org/ggml d99724f2's, together with the files it
// calls there (openvino/op_table.cpp, utils.cpp, ggml-openvino-extra.cpp);
// "upstream" in this package's comments means those files. One device, OPENVINO0, on the OpenVINO device chosen
// by GGML_OPENVINO_DEVICE (CPU, GPU, GPU.N, NPU); its buffer types; the
// conversion of quantized weights into OpenVINO's layout as they are set;
// every supports-op rule with upstream's reasons; and graph compute,
// where each graph becomes an IR v11 model (public opsets only) whose
// weights are Constants over the weight buffers, compiled once per graph
// structure and run with its inputs and outputs bound to ggml's memory.
//
// Importing the package registers the OPENVINO registry with package
// backend; without the library the device is listed as unavailable with
// every path searched. Options (one field per GGML_OPENVINO_* variable)
// configure it; OptionsFromEnv reads the variables.
//
// What is verified where: every claim in this package's comments is
// "verified on the double" (testdata/, a C stand-in for libopenvino_c
// built by the tests, on linux/amd64) unless it says "not verified". No
// real OpenVINO has run this code; README.md lists what only one can
// confirm.
package openvino
