// Command ggml is ggml-go's command-line tool.
//
//	ggml bench alloc [-small]           compute buffer sizes of our graph allocator beside ggml's gallocr
//	ggml bench matmul|dispatch|quant|demo|ops [-b NAME] [-threads N,...] [-types T,...] [-n 1,32,256] [-ref ggml|none] [-tsv]
//	                                    speed beside the real ggml, interleaved in one process
//	ggml bench block [-b NAME] [-runs N] [-threads N] [-tokens N] [-ctx N] [-embd N]
//	                                    the demo block through the scheduler on any device, beside ggml
//	ggml bench model [-m FILE] [-threads N] [-pp N] [-tg N] [-reps N] [-type T] [-b DEVICE] [-llama npm|rpc-ref]
//	                 [-bandwidth MiB] [-inproc]
//	                                    a whole model's tokens/s beside libllama in a process of its own,
//	                                    memory bandwidth and generation's fraction of it, resident memory
//	ggml bench rpc [-servers H:P,...] [-ref ggml|none] [-embd N] [-layers N] [-vocab N] [-tokens N] [-runs N] [-threads N]
//	                                    a decode step split over two RPC servers beside the local CPU and ggml's pair
//	ggml demo [-device NAME] [-threads N] [-seed N] [-tokens N] [-ctx N] [-embd N] [-rope neox|normal]
//	                                    one decoder block through the scheduler, checked against the CPU
//	ggml devices                        every registered device, and why an unavailable one cannot be used
//	ggml gen-model -o FILE [-arch llama|qwen2] [-type T] [-vocab none|spm|bpe] [-embd N -layers N -heads N -kv-heads N
//	               -ff N -vocab-size N -ctx N -seed N -tied]
//	                                    a random-weight model file llama.cpp also loads
//	ggml gguf-info [-n N] [-no-tensors] FILE
//	                                    a GGUF file's metadata, tensors and totals, as gguf-dump prints them
//	ggml rpc-server [-host H] [-port P] [-device NAME,...] [-cache DIR] [-threads N] [-token T] [-tls-cert F -tls-key F]
//	                                    serve our devices to ggml RPC clients (protocol 7.0.0)
//	ggml run [-m FILE] [-p TEXT [-raw] [-template NAME] | -tokens 1,2,3] [-n N] [-device NAME] [-threads N] [-seed N]
//	         [-logits OUT] [-temp T -top-k K -top-p P -min-p P -repeat-penalty R] [-ctx N] [-fa]
//	                                    a llama/qwen2/gemma3 GGUF model, -p in its chat template (SmolLM2 from the
//	                                    cache without -m, else a generated one), streamed, tokens/s
//	ggml chat [-m FILE] [-system TEXT] [-template NAME] [-n N] [-ctx N] [-threads N] [-temp T -seed N]
//	                                    an interactive conversation kept in the KV cache between turns
//	ggml quant-stats [-type T] [-ref]   quantization accuracy and speed, beside the real ggml
//	ggml test-ops [-b NAME] [-o OP,...] [-ref ggml|cpu] [-seed N] [-cases quick|full] [-threads N]
//	              [-mode test|support] [-report FILE] [-v] [-q]
//	                                    op conformance of any device against a reference
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	// Devices register themselves with package backend when linked in.
	_ "github.com/ggml-go/ggml/devices/cpu"
	_ "github.com/ggml-go/ggml/devices/hexagon"
	_ "github.com/ggml-go/ggml/devices/openvino"
	_ "github.com/ggml-go/ggml/devices/rpc"
)

type command struct {
	summary string
	run     func(args []string, stdout io.Writer) error
}

var commands = map[string]command{
	"bench":       {"benchmarks beside the real ggml: alloc (buffer sizes), matmul, dispatch, quant, demo, ops, block, model, rpc (speed)", runBench},
	"chat":        {"an interactive conversation with a model, kept in its KV cache between turns (ggml chat -m FILE)", runChat},
	"demo":        {"one llama-style decoder block run through the scheduler on a device, checked against the CPU", runDemo},
	"devices":     {"every registered device: type, memory, caps, and why an unavailable one cannot be used", runDevices},
	"gen-model":   {"a random-weight llama or qwen2 model file that llama.cpp also loads, for tests and demos", runGenModel},
	"gguf-info":   {"a GGUF file's metadata, tensors (type, shape, offset, size) and totals, as gguf-dump prints them", runGGUFInfo},
	"rpc-server":  {"serve devices to ggml RPC clients (llama.cpp's --rpc, our RPC device), protocol 7.0.0", runRPCServer},
	"run":         {"a llama, qwen2 or gemma3 GGUF model (without -m: SmolLM2 from the cache, else a generated one), chat-templated", runRun},
	"quant-stats": {"bits per weight, error and speed of every quantization format, beside the real ggml", runQuantStats},
	"test-ops":    {"op conformance cases on a device, compared with the real ggml or our CPU device", runTestOps},
}

// errUsage marks errors caused by the command line; they exit with status
// 2. usageErrorf makes them: the message is the sentence alone, without a
// "usage" prefix.
var errUsage = errors.New("bad command line")

type usageError struct{ error }

func (usageError) Is(target error) bool { return target == errUsage }

func usageErrorf(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func main() {
	if os.Getenv(llamaChildEnv) != "" {
		os.Exit(runLlamaChild(os.Stdin, os.Stdout))
	}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		progressOut = os.Stderr
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "ggml: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	if err := cmd.run(args[1:], stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "ggml %s: %v\n", args[0], err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ggml <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nrun 'ggml <command> -h' for a command's flags")
}
