package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/rpc"
)

// runRPCServer is ggml's rpc-server for our devices: it serves them to
// ggml RPC clients (llama.cpp's --rpc, or our RPC device) until
// interrupted.
func runRPCServer(args []string, stdout io.Writer) error {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	defer signal.Stop(stop)
	return serveRPC(args, stdout, stop)
}

// serveRPC is rpc-server serving until stop receives.
func serveRPC(args []string, stdout io.Writer, stop <-chan os.Signal) error {
	fs := flag.NewFlagSet("rpc-server", flag.ContinueOnError)
	host := fs.String("host", "127.0.0.1", "address to bind to")
	port := fs.Int("port", 50052, "port to bind to (0: any free port, printed)")
	devs := fs.String("device", "CPU", "devices to serve, comma-separated `NAME,...` as ggml devices lists them")
	cache := fs.String("cache", "", "folder keeping large weights by hash, so a client's second load skips their upload (ggml's -c)")
	threads := fs.Int("threads", 0, "threads of each device's backend (0: the device's default)")
	token := fs.String("token", "", "a shared secret our own client must send (off by default: a stock ggml client sends none)")
	cert := fs.String("tls-cert", "", "serve TLS with this certificate file (with -tls-key; off by default: a stock ggml client speaks plain TCP)")
	key := fs.String("tls-key", "", "the certificate's key file")
	maxMem := fs.Uint64("max-mem", 0, "the most `MiB` of buffers all clients together hold (0: the served devices' total memory)")
	maxConns := fs.Int("max-conns", 0, "the most clients served at once (0: 64)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml rpc-server [-host H] [-port P] [-device NAME,...] [-cache DIR] [-threads N] [-token T] [-tls-cert F -tls-key F] [-max-mem MIB] [-max-conns N]\n\n"+
			"Serves our devices to ggml RPC clients (llama.cpp's --rpc, our RPC device), protocol 7.0.0, until interrupted.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErrorf("%v", err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	if *port < 0 || *port > 65535 {
		return usageErrorf("-port %d is not a port number", *port)
	}
	if err := backend.CheckThreads(*threads); err != nil {
		return usageErrorf("-threads: %v", err)
	}
	if *maxConns < 0 {
		return usageErrorf("-max-conns %d is negative", *maxConns)
	}
	if *maxMem > 1<<44 {
		return usageErrorf("-max-mem %d MiB is over 16 EiB", *maxMem)
	}
	if (*cert == "") != (*key == "") {
		return usageErrorf("-tls-cert and -tls-key go together")
	}
	srv := &rpc.Server{Threads: *threads, CacheDir: *cache, Token: *token,
		Limits: rpc.Limits{ServerMemory: *maxMem << 20, Connections: *maxConns}}
	for _, name := range strings.Split(*devs, ",") {
		d, err := backend.DeviceByName(strings.TrimSpace(name))
		if err != nil {
			return fmt.Errorf("-device: %w", err)
		}
		if err := backend.Availability(d); err != nil {
			return fmt.Errorf("-device %s: %w", d.Name(), err)
		}
		if strings.HasPrefix(strings.ToUpper(d.Name()), "RPC") {
			return usageErrorf("-device %s is itself a remote device", d.Name())
		}
		srv.Devices = append(srv.Devices, d)
	}
	if *cache != "" {
		if err := os.MkdirAll(*cache, 0o755); err != nil {
			return fmt.Errorf("-cache: %w", err)
		}
	}
	if *cert != "" {
		pair, err := tls.LoadX509KeyPair(*cert, *key)
		if err != nil {
			return fmt.Errorf("-tls-cert/-tls-key: %w", err)
		}
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Starting RPC server v%d.%d.%d\n", rpc.ProtoMajor, rpc.ProtoMinor, rpc.ProtoPatch)
	fmt.Fprintf(stdout, "  endpoint       : %s\n", ln.Addr())
	fmt.Fprintf(stdout, "  local cache    : %s\n", orNA(*cache))
	if *maxMem > 0 {
		fmt.Fprintf(stdout, "  memory limit   : %d MiB, all clients together\n", *maxMem)
	} else {
		fmt.Fprintf(stdout, "  memory limit   : the devices' total, all clients together\n")
	}
	fmt.Fprintf(stdout, "Devices:\n")
	for _, d := range srv.Devices {
		free, total := d.Memory()
		fmt.Fprintf(stdout, "  %s: %s (%d MiB, %d MiB free)\n", d.Name(), d.Description(), total>>20, free>>20)
	}
	if ip := net.ParseIP(*host); ip == nil || !ip.IsLoopback() {
		fmt.Fprintf(stdout, "WARNING: Host ('%s') is not a loopback address\n", *host)
		fmt.Fprintf(stdout, "         Never expose the RPC server to an open network!\n")
	}
	if *token == "" {
		fmt.Fprintf(stdout, "The RPC protocol has no authentication: anyone who reaches this port can use the devices and read what they hold.\n")
	}
	go func() {
		<-stop
		_ = srv.Close()
	}()
	return srv.Serve(ln)
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}
