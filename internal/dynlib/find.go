package dynlib

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotFound reports a library found under none of the names and folders
// searched.
var ErrNotFound = errors.New("dynlib: library not found")

// Find returns the first existing file dir/name, trying every name in
// every folder in order (folders first, so a folder earlier in the list
// wins). tried lists every path looked at, in order, also when one is
// found, so a device can tell the user where it looked. An empty name or
// folder is skipped. When nothing exists the error wraps ErrNotFound and
// names the paths tried.
func Find(names, dirs []string) (path string, tried []string, err error) {
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		for _, name := range names {
			if name == "" {
				continue
			}
			p := filepath.Join(dir, name)
			tried = append(tried, p)
			if fi, statErr := os.Stat(p); statErr == nil && !fi.IsDir() {
				return p, tried, nil
			}
		}
	}
	return "", tried, notFound(names, tried)
}

func notFound(names, tried []string) error {
	if len(tried) == 0 {
		return fmt.Errorf("%w: %s (no folder to search)", ErrNotFound, strings.Join(names, ", "))
	}
	return fmt.Errorf("%w: %s; tried %s", ErrNotFound, strings.Join(names, ", "), strings.Join(tried, ", "))
}

// Load finds a library with Find and opens it. When no folder holds it,
// each bare name is handed to the system loader, which searches its own
// path (LD_LIBRARY_PATH, the loader cache, PATH on windows); those
// attempts appear in tried as "name (system search path)". The error
// wraps ErrNotFound when nothing could be found, or ErrOpen when a file
// exists but does not load (wrong architecture, missing dependency).
func Load(names, dirs []string) (lib *Library, tried []string, err error) {
	p, tried, findErr := Find(names, dirs)
	if findErr == nil {
		lib, err = Open(p)
		return lib, tried, err
	}
	for _, name := range names {
		if name == "" {
			continue
		}
		tried = append(tried, name+" (system search path)")
		if lib, err := Open(name); err == nil {
			return lib, tried, nil
		}
	}
	return nil, tried, notFound(names, tried)
}

// SearchDirs returns the folders listed in the environment variable env
// (separated by os.PathListSeparator), followed by defaults: a user's
// setting comes first, the usual install places after.
func SearchDirs(env string, defaults ...string) []string {
	var dirs []string
	if v := os.Getenv(env); v != "" {
		for _, d := range filepath.SplitList(v) {
			if d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	return append(dirs, defaults...)
}
