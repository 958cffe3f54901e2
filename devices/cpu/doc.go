// Package cpu is the pure-Go CPU device: reference kernels for every
// operation the other devices can run, a persistent worker pool that splits
// each operation's rows across threads, and the supports-op rule that says
// exactly what it can compute. Its results are what the accelerators are
// checked against, so the kernels favour clarity; they agree with ggml's CPU
// backend within test-backend-ops tolerances. The matrix products reach
// their arithmetic through a kernel set (traits.go): assembly where the
// processor has it, the generic Go otherwise or on request.
//
// # Architecture levels
//
// Each architecture level (avx2, avx512vnni and, on linux, amx on amd64;
// neon and neon-dotprod on arm64) is one table of kernels in one file,
// level_<name>_<arch>.go, which registers it with its name, its priority,
// the processor features its assembly needs and every kernel it has
// (level.go says which kinds). The
// best level the processor supports is chosen once, at start; the purego
// build tag builds no level and GGML_CPU_GENERIC=1 keeps the generic Go
// (EnvGeneric), and GGML_CPU_AMX=0 leaves the amx level out (EnvAMX):
// its products of several columns run on the tile unit in the order of
// ggml's AMX code, bit for bit ggml's sapphirerapids build with the weight
// in its AMX buffer, and so in another order than avx2's (MatrixUnitTypes
// names their types), where avx512vnni's are avx2's (the haswell build's)
// bit for bit. Engine.Kernels names the set an
// Engine uses; KernelReport, which `ggml devices` prints, lists the levels
// and the kernels in use.
//
// # Adding a level
//
// Adding a level, say avx512 on amd64, is one new file of registrations
// plus its assembly, nothing else:
//
//   - level_avx512_amd64.go (build tag !purego): var levelAVX512 =
//     register(&level{name: "avx512", priority: 30, supported: ...,
//     dots: ..., gemm: ..., vec: ...}), a priority above avx2's 20 and
//     the features its assembly needs. Kernels it does not have it takes
//     from the level below by name (an avx2 kernel is a Go function any
//     file of the package can list) or leaves to the generic Go. An exact
//     register tile gets its edges from the level's own vec_dot, so its
//     tile shape is its own, not avx2's.
//     A level that differs from the one below in a few kernels is that
//     level's over(name, priority, features, dots, rows), listing only
//     those (level_avx512vnni_amd64.go).
//   - its .s files and their //go:noescape declarations.
//
// The tests then check the new level where it runs: TestLevelsWellFormed
// its table on any machine, TestKernelSetsAgree its vec_dot against the
// generic Go, the gemm, repack and from_float tests its products, and
// GGML_TEST_KERNELS=avx512 fails the run unless it is the level chosen.
package cpu
