package openvino

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// libraryName is what users install: the OpenVINO C API library.
const libraryName = "libopenvino_c"

// libNames are the file names of the C API library on goos, unversioned
// first.
func libNames(goos string) []string {
	switch goos {
	case "windows":
		return []string{"openvino_c.dll"}
	case "darwin":
		return []string{"libopenvino_c.dylib"}
	}
	return []string{"libopenvino_c.so"}
}

// versioned lists the versioned copies of the library in dir
// (libopenvino_c.so.2510, libopenvino_c.2510.dylib), newest first, so a
// folder holding only the soname (no development symlink) still works.
func versioned(goos, dir string) []string {
	pattern := "libopenvino_c.so.*"
	switch goos {
	case "windows":
		return nil
	case "darwin":
		pattern = "libopenvino_c.*.dylib"
	}
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	names := make([]string, 0, len(m))
	for _, p := range m {
		names = append(names, filepath.Base(p))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	return names
}

// archDirs are the runtime/lib sub-folders of an OpenVINO install for
// goarch (the archives use intel64 and aarch64/arm64, Release below them
// on windows and macOS).
func archDirs(goos, goarch string) []string {
	arch := []string{"intel64"}
	if goarch == "arm64" {
		arch = []string{"aarch64", "arm64"}
	}
	lib := "lib"
	if goos == "windows" {
		lib = "bin"
	}
	var out []string
	for _, a := range arch {
		out = append(out, filepath.Join("runtime", lib, a), filepath.Join("runtime", lib, a, "Release"))
	}
	return out
}

// searchDirs are the folders searched, in order: GGML_OPENVINO_LIB when it
// is a folder, INTEL_OPENVINO_DIR's runtime libraries, the usual install
// places (/opt/intel/openvino*, newest first), then the loader's path
// folders, so that versioned sonames there are found too. The system
// loader is tried last with the bare names.
func searchDirs(libOpt string, getenv func(string) string, goos, goarch string) []string {
	var dirs []string
	if libOpt != "" {
		dirs = append(dirs, libOpt)
	}
	roots := []string{}
	if d := getenv("INTEL_OPENVINO_DIR"); d != "" {
		roots = append(roots, d)
	}
	switch goos {
	case "windows":
		roots = append(roots, `C:\Program Files (x86)\Intel\openvino`, `C:\Program Files\Intel\openvino`)
	default:
		m, _ := filepath.Glob("/opt/intel/openvino*")
		sort.Sort(sort.Reverse(sort.StringSlice(m)))
		roots = append(roots, m...)
	}
	for _, r := range roots {
		for _, a := range archDirs(goos, goarch) {
			dirs = append(dirs, filepath.Join(r, a))
		}
	}
	pathVar := "LD_LIBRARY_PATH"
	switch goos {
	case "windows":
		pathVar = "PATH"
	case "darwin":
		pathVar = "DYLD_LIBRARY_PATH"
	}
	for _, d := range filepath.SplitList(getenv(pathVar)) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	if goos == "linux" {
		triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[goarch]
		dirs = append(dirs, "/usr/local/lib")
		if triplet != "" {
			dirs = append(dirs, "/usr/lib/"+triplet)
		}
		dirs = append(dirs, "/usr/lib")
	}
	if goos == "darwin" {
		dirs = append(dirs, "/usr/local/lib", "/opt/homebrew/lib")
	}
	return dedupe(dirs)
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// libOptIsFile reports whether GGML_OPENVINO_LIB names a file (then only
// that file is used) rather than a folder.
func libOptIsFile(p string) bool {
	if p == "" {
		return false
	}
	fi, err := os.Stat(p)
	if err != nil {
		// A path that does not exist but looks like a library is taken as
		// a file, so the error names it rather than a folder search.
		base := strings.ToLower(filepath.Base(p))
		return strings.Contains(base, ".so") || strings.HasSuffix(base, ".dll") || strings.HasSuffix(base, ".dylib")
	}
	return !fi.IsDir()
}

// candidateNames are the file names looked for in dirs: the plain names
// and every versioned copy found in them.
func candidateNames(dirs []string) []string {
	names := libNames(runtime.GOOS)
	for _, d := range dirs {
		names = append(names, versioned(runtime.GOOS, d)...)
	}
	return dedupe(names)
}
