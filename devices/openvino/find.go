package openvino

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
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
// folder holding only the soname (the pip wheel has no unversioned name)
// works.
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

// searchPlace is one kind of place the library is looked for: what it is
// (as `ggml devices` prints it) and its folders, computed only when the
// places before it held nothing (the python3 query runs a process).
type searchPlace struct {
	from string
	dirs func() []string
}

// searchEnv is what the search reads from its surroundings: the
// environment, the platform, and where the python3 on PATH finds the
// openvino package (nil: not asked).
type searchEnv struct {
	getenv       func(string) string
	goos, goarch string
	python       func() []string
}

// searchPlaces are the places searched, in order: GGML_OPENVINO_LIB when
// it is a folder; INTEL_OPENVINO_DIR's runtime libraries; a pip-installed
// openvino in VIRTUAL_ENV and CONDA_PREFIX (and conda's own lib folder);
// the loader's path folders; the usual install places (/opt/intel/openvino*
// newest first, /usr/local/lib, ...); the openvino package that the
// python3 on PATH finds in its user or system site-packages; the folders
// scripts/fetch-openvino fills (newest release first). The system loader
// is tried last with the bare names.
func searchPlaces(libOpt string, e searchEnv) []searchPlace {
	fixed := func(dirs ...string) func() []string { return func() []string { return dirs } }
	var places []searchPlace
	if libOpt != "" {
		places = append(places, searchPlace{"GGML_OPENVINO_LIB", fixed(libOpt)})
	}
	if d := e.getenv("INTEL_OPENVINO_DIR"); d != "" {
		var dirs []string
		for _, a := range archDirs(e.goos, e.goarch) {
			dirs = append(dirs, filepath.Join(d, a))
		}
		places = append(places, searchPlace{"INTEL_OPENVINO_DIR", fixed(dirs...)})
	}
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if root := e.getenv(v); root != "" {
			dirs := sitePackagesLibs(root, e.goos)
			if v == "CONDA_PREFIX" {
				// conda-forge's openvino package puts the libraries in
				// the environment's own library folder.
				if e.goos == "windows" {
					dirs = append(dirs, filepath.Join(root, "Library", "bin"))
				} else {
					dirs = append(dirs, filepath.Join(root, "lib"))
				}
			}
			places = append(places, searchPlace{v, fixed(dirs...)})
		}
	}
	pathVar := "LD_LIBRARY_PATH"
	switch e.goos {
	case "windows":
		pathVar = "PATH"
	case "darwin":
		pathVar = "DYLD_LIBRARY_PATH"
	}
	var pathDirs []string
	for _, d := range filepath.SplitList(e.getenv(pathVar)) {
		if d != "" {
			pathDirs = append(pathDirs, d)
		}
	}
	places = append(places, searchPlace{pathVar, fixed(pathDirs...)})
	places = append(places, searchPlace{"install places", fixed(installDirs(e.goos, e.goarch)...)})
	if e.python != nil {
		places = append(places, searchPlace{"python3 site-packages", e.python})
	}
	places = append(places, searchPlace{"scripts/fetch-openvino cache", func() []string { return fetchCacheDirs(e.getenv) }})
	return places
}

// installDirs are the folders of installs outside any Python environment.
func installDirs(goos, goarch string) []string {
	var roots, dirs []string
	switch goos {
	case "windows":
		roots = []string{`C:\Program Files (x86)\Intel\openvino`, `C:\Program Files\Intel\openvino`}
	default:
		m, _ := filepath.Glob("/opt/intel/openvino*")
		sort.Sort(sort.Reverse(sort.StringSlice(m)))
		roots = m
	}
	for _, r := range roots {
		for _, a := range archDirs(goos, goarch) {
			dirs = append(dirs, filepath.Join(r, a))
		}
	}
	switch goos {
	case "linux":
		dirs = append(dirs, "/usr/local/lib")
		if triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[goarch]; triplet != "" {
			dirs = append(dirs, "/usr/lib/"+triplet)
		}
		dirs = append(dirs, "/usr/lib")
	case "darwin":
		dirs = append(dirs, "/usr/local/lib", "/opt/homebrew/lib")
	}
	return dirs
}

// sitePackagesLibs are the openvino/libs folders of the Python
// environment at root: Lib\site-packages on windows, lib/python3.*/
// site-packages elsewhere.
func sitePackagesLibs(root, goos string) []string {
	if goos == "windows" {
		return []string{filepath.Join(root, "Lib", "site-packages", "openvino", "libs")}
	}
	m, _ := filepath.Glob(filepath.Join(root, "lib", "python3*", "site-packages", "openvino", "libs"))
	sort.Sort(sort.Reverse(sort.StringSlice(m)))
	if len(m) == 0 {
		// Not there yet: name the place so `ggml devices` shows it.
		m = []string{filepath.Join(root, "lib", "python3.X", "site-packages", "openvino", "libs")}
	}
	return m
}

// FetchedRuntimes are the library folders of the real OpenVINO releases
// scripts/fetch-openvino unpacked, newest first: the folders the loader
// searches last, for tests and tools that run on each release.
func FetchedRuntimes() []string { return fetchCacheDirs(os.Getenv) }

// fetchCacheDirs are the library folders scripts/fetch-openvino unpacked
// ($XDG_CACHE_HOME or ~/.cache, then ggml-go/openvino/VERSION/openvino/
// libs), newest release first.
func fetchCacheDirs(getenv func(string) string) []string {
	base := getenv("XDG_CACHE_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			home = getenv("USERPROFILE")
		}
		if home == "" {
			return nil
		}
		base = filepath.Join(home, ".cache")
	}
	root := filepath.Join(base, "ggml-go", "openvino")
	m, _ := filepath.Glob(filepath.Join(root, "*", "openvino", "libs"))
	sort.Slice(m, func(i, j int) bool {
		return releaseLess(filepath.Base(filepath.Dir(filepath.Dir(m[j]))), filepath.Base(filepath.Dir(filepath.Dir(m[i]))))
	})
	return m
}

// releaseLess orders release numbers ("2025.0.0" < "2025.10.0")
// numerically part by part; a part that is no number sorts as text.
func releaseLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, ex := strconv.Atoi(pa[i])
		y, ey := strconv.Atoi(pb[i])
		switch {
		case ex == nil && ey == nil && x != y:
			return x < y
		case (ex != nil || ey != nil) && pa[i] != pb[i]:
			return pa[i] < pb[i]
		}
	}
	return len(pa) < len(pb)
}

// pythonQuery is the program the python3 on PATH runs to say where the
// openvino package is: importlib.util.find_spec locates a top-level
// package without importing it, so nothing of OpenVINO runs there, and
// nothing is imported into this process.
const pythonQuery = "import importlib.util as u\n" +
	"s = u.find_spec('openvino')\n" +
	"print('\\n'.join(s.submodule_search_locations or []) if s else '')\n"

// pythonTimeout bounds the python3 query (a cold interpreter start is
// about 50 ms; a hung one must not hang device discovery).
const pythonTimeout = 5 * time.Second

var (
	pythonOnce sync.Once
	pythonLibs []string
)

// pythonSitePackages asks the python3 on PATH (python on windows, where
// python3 is often the store's stub), once per process and with a
// timeout, where the openvino package lives, and returns its libs
// folders.
func pythonSitePackages(goos string) func() []string {
	return func() []string {
		pythonOnce.Do(func() {
			names := []string{"python3"}
			if goos == "windows" {
				names = []string{"python", "python3"}
			}
			pythonLibs = askPython(names)
		})
		return pythonLibs
	}
}

// askPython runs pythonQuery with the first of names found on PATH.
func askPython(names []string) []string {
	for _, name := range names {
		exe, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), pythonTimeout)
		out, err := exec.CommandContext(ctx, exe, "-c", pythonQuery).Output()
		cancel()
		if err == nil {
			return parsePythonQuery(string(out))
		}
	}
	return nil
}

// parsePythonQuery turns the package folders pythonQuery prints into
// their libs folders.
func parsePythonQuery(out string) []string {
	var dirs []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			dirs = append(dirs, filepath.Join(l, "libs"))
		}
	}
	return dirs
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
func candidateNames(goos string, dirs []string) []string {
	names := libNames(goos)
	for _, d := range dirs {
		names = append(names, versioned(goos, d)...)
	}
	return dedupe(names)
}
