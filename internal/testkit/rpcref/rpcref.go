// Package rpcref drives the real ggml's RPC peer, for the RPC device's
// interop tests: its server program (ggml-rpc-server) started in a child
// process, and its client (ggml_backend_rpc_add_server and
// ggml_backend_rpc_init) loaded through purego. Both come from the ggml
// that the PyPI source package llama-cpp-python 0.3.36 vendors (ggml
// 0.25.3, RPC protocol 7.0.0), which scripts/fetch-rpc-ref builds into the
// cache folder.
package rpcref

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Environment variables read by this package.
const (
	// EnvLibDir names the folder holding ggml-rpc-server and the libraries.
	EnvLibDir = "GGML_RPC_REF_LIB_DIR"
	// EnvRequired, when "1", turns a missing peer into a test failure.
	EnvRequired = "GGML_REF_REQUIRED"
)

// Version is the llama-cpp-python release whose ggml is the peer.
const Version = "0.3.36"

// ErrNotAvailable reports that the reference peer is not built.
var ErrNotAvailable = errors.New("rpcref: the reference RPC peer is not available")

// LibDir is GGML_RPC_REF_LIB_DIR, or the build folder scripts/fetch-rpc-ref
// fills (under GGML_RPC_REF_CACHE, else the user cache folder).
func LibDir() (string, error) {
	if d := os.Getenv(EnvLibDir); d != "" {
		return d, nil
	}
	cache := os.Getenv("GGML_RPC_REF_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		cache = filepath.Join(base, "ggml-go", "rpc-ref")
	}
	d := filepath.Join(cache, "build-"+Version, "bin")
	if _, err := os.Stat(filepath.Join(d, "libggml-rpc.so")); err != nil {
		return "", fmt.Errorf("%w: %s is not set and %s has no libggml-rpc.so (run scripts/fetch-rpc-ref)", ErrNotAvailable, EnvLibDir, d)
	}
	return d, nil
}

// Need returns the peer's folder, or skips the test when it is missing
// (fails it when GGML_REF_REQUIRED=1, as in CI).
func Need(t testing.TB) string {
	t.Helper()
	d, err := LibDir()
	if err != nil {
		skipOrFail(t, err)
	}
	return d
}

// skipOrFail skips a test for a missing peer, or fails it when
// GGML_REF_REQUIRED=1.
func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(EnvRequired) == "1" {
		t.Fatalf("%v (%s=1)", err, EnvRequired)
	}
	t.Skip(err)
}

// Server is a running ggml-rpc-server.
type Server struct {
	Addr string
	cmd  *exec.Cmd
	done chan error
	mu   sync.Mutex
	out  strings.Builder
}

// Config is how a ggml-rpc-server is started.
type Config struct {
	// Threads is its -t (0: 1).
	Threads int
	// CacheDir, when set, turns on its -c cache, kept in this folder.
	CacheDir string
	// Devices is its -d list (empty: ggml's default, the CPU here); a
	// name may repeat, each entry being a device of its own to clients.
	Devices []string
}

// StartServer starts ggml-rpc-server on a free loopback port, killed when
// the test ends; a missing peer skips the test (fails it in CI).
func StartServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	dir := Need(t)
	s, err := start(dir, cfg)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(s.Kill)
	return s
}

// Start starts ggml-rpc-server on a free loopback port, for programs
// (ggml bench rpc); the caller kills it.
func Start(cfg Config) (*Server, error) {
	dir, err := LibDir()
	if err != nil {
		return nil, err
	}
	return start(dir, cfg)
}

// start tries a few free ports: another process may take the one picked
// between its listener closing and the server binding it.
func start(dir string, cfg Config) (*Server, error) {
	var lastErr error
	for range 5 {
		s, err := startOnce(dir, cfg)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("rpcref: ggml-rpc-server did not start: %w", lastErr)
}

func startOnce(dir string, cfg Config) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	args := []string{"-H", "127.0.0.1", "-p", strconv.Itoa(port), "-t", strconv.Itoa(max(cfg.Threads, 1))}
	if len(cfg.Devices) > 0 {
		args = append(args, "-d", strings.Join(cfg.Devices, ","))
	}
	cmd := exec.Command(filepath.Join(dir, "ggml-rpc-server"), args...)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
	if cfg.CacheDir != "" {
		cmd.Args = append(cmd.Args, "-c")
		cmd.Env = append(cmd.Env, "LLAMA_CACHE="+cfg.CacheDir, "XDG_CACHE_HOME="+cfg.CacheDir)
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd, done: make(chan error, 1)}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	pw.Close()
	go func() {
		// Its stdout is a pipe, so ggml's printf lines come in blocks.
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.mu.Lock()
			s.out.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
		pr.Close()
	}()
	go func() { s.done <- cmd.Wait() }()
	// Wait until it listens (a connection that says nothing is a client
	// the server drops at once).
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-s.done:
			s.done <- err
			return nil, fmt.Errorf("exited: %v: %s", err, s.Output())
		default:
		}
		if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
			_ = c.Close()
			return s, nil
		}
	}
	s.Kill()
	return nil, errors.New("not listening after 20 s")
}

// Kill ends the server (SIGKILL) and waits for it.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	err := <-s.done
	s.done <- err
}

// Output is what the server printed so far.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}
