// Package reftest gives tests the reference ggml, or skips them when it is
// absent, unless GGML_REF_REQUIRED=1 makes absence a failure (as in CI);
// and the fixed oracle data the repository carries.
package reftest

//go:generate go run ../oraclegen

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
)

// Lib returns the process-wide reference library, skipping or failing t
// when it cannot be loaded.
func Lib(t testing.TB) *ggmlref.Lib {
	t.Helper()
	l, err := ggmlref.Default()
	if err != nil {
		fail(t, err.Error())
	}
	return l
}

// EnvOracleDir names a folder holding an unpacked oracle data set to use
// instead of the repository's archive.
const EnvOracleDir = "GGML_ORACLE_DIR"

// OracleVersion is the data set's top folder inside the archive.
const OracleVersion = "ggml-0.25.1"

// OracleArchive is the oracle data set, relative to the module root:
// bit-exact quantizations, conversions and small matmul results of the real
// ggml, written by `go generate ./internal/testkit/ggmlref/reftest`
// (internal/testkit/ggmlref/oraclegen).
const OracleArchive = "testdata/oracle/" + OracleVersion + ".tar.gz"

// OracleDir returns a folder with the unpacked oracle data set: the
// repository's archive unpacked once into the user cache folder (named by
// the archive's hash, so a new archive gets a new folder), or the folder
// GGML_ORACLE_DIR names. Without either it fails t (GGML_REF_REQUIRED=1) or
// skips it, saying what is missing.
func OracleDir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv(EnvOracleDir); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "manifest.tsv")); err != nil {
			fail(t, fmt.Sprintf("%s=%s is not an oracle data set: %v", EnvOracleDir, dir, err))
		}
		return dir
	}
	unpackOnce.Do(func() { unpacked, unpackErr = unpack() })
	if unpackErr != nil {
		fail(t, fmt.Sprintf("oracle data: %v (restore %s with git, or regenerate it: go generate ./internal/testkit/ggmlref/reftest)", unpackErr, OracleArchive))
	}
	return unpacked
}

var (
	unpackOnce sync.Once
	unpacked   string
	unpackErr  error
)

// ArchivePath is the absolute path of OracleArchive in this module.
func ArchivePath() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, filepath.FromSlash(OracleArchive)), nil
}

// ArchiveFile returns the file name (a slash path inside the data set, such
// as "inputs/sin.f32") from the archive at archivePath.
func ArchiveFile(archivePath, name string) ([]byte, error) {
	var out []byte
	found := false
	err := walkArchive(archivePath, func(n string, r io.Reader) error {
		if n != name {
			return nil
		}
		b, err := io.ReadAll(r)
		out, found = b, true
		return err
	})
	if err == nil && !found {
		err = fmt.Errorf("%s has no %s", archivePath, name)
	}
	return out, err
}

// walkArchive calls fn with every regular file of the archive, named
// relative to the data set's top folder.
func walkArchive(archivePath string, fn func(name string, r io.Reader) error) error {
	f, err := os.Open(archivePath)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", archivePath, err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", archivePath, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		name, ok := strings.CutPrefix(hdr.Name, OracleVersion+"/")
		if !ok || !fs.ValidPath(name) {
			return fmt.Errorf("%s: unexpected entry %q", archivePath, hdr.Name)
		}
		if err := fn(name, tr); err != nil {
			return err
		}
	}
}

// unpack unpacks the archive into <user cache>/ggml-go/oracle/<hash>,
// unless an earlier run (of any test binary) did, checking every file
// against the archive's SHA256SUMS.
func unpack() (string, error) {
	archive, err := ArchivePath()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	parent := filepath.Join(base, "ggml-go", "oracle")
	final := filepath.Join(parent, hex.EncodeToString(sum[:8]))
	dir := filepath.Join(final, OracleVersion)
	if _, err := os.Stat(filepath.Join(dir, "SHA256SUMS")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent, "unpacking-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // gone after the rename, or a failed attempt
	files := map[string][]byte{}
	err = walkArchive(archive, func(name string, r io.Reader) error {
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		files[name] = b
		p := filepath.Join(tmp, OracleVersion, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, b, 0o644)
	})
	if err != nil {
		return "", err
	}
	if err := checkSums(files); err != nil {
		return "", fmt.Errorf("%s: %w", archive, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another test binary unpacked the same archive meanwhile.
		if _, serr := os.Stat(filepath.Join(dir, "SHA256SUMS")); serr == nil {
			return dir, nil
		}
		return "", err
	}
	return dir, nil
}

// checkSums checks every file against the SHA256SUMS among them, and that
// every file is listed.
func checkSums(files map[string][]byte) error {
	list, ok := files["SHA256SUMS"]
	if !ok {
		return errors.New("no SHA256SUMS")
	}
	listed := 0
	sc := bufio.NewScanner(bytes.NewReader(list))
	for sc.Scan() {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return fmt.Errorf("SHA256SUMS: bad line %q", sc.Text())
		}
		b, ok := files[path.Clean(name)]
		if !ok {
			return fmt.Errorf("SHA256SUMS lists %s, which is missing", name)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != want {
			return fmt.Errorf("%s does not match its SHA256SUMS entry", name)
		}
		listed++
	}
	if listed != len(files)-1 {
		return fmt.Errorf("SHA256SUMS lists %d of %d files", listed, len(files)-1)
	}
	return sc.Err()
}

func fail(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv(ggmlref.EnvRequired) == "1" {
		t.Fatalf("%s (%s=1)", msg, ggmlref.EnvRequired)
	}
	t.Skip("skipping: " + msg)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
