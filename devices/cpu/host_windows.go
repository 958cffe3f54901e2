package cpu

import "github.com/ggml-go/ggml/internal/hostmem"

func hostMemory() (free, total uint64) { return hostmem.Physical() }

// cpuModel is empty: the model name lives in the registry, which is not
// worth a dependency here.
func cpuModel() string { return "" }
