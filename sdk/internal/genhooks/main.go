// Command genhooks writes the SDKs' per-hook code from the protocol (package
// hookgen says what and from where). It runs through go generate in package
// sdk, after protoc in `make generate`:
//
//	go run ./internal/genhooks -grpc ../proto/exocortex/v1/plugin_grpc.pb.go -out hooks_gen.go -py python/exocortex/_hooks_gen.py
//
// Files are rewritten only when their content changes.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/exocortex/exocortex/internal/genfile"
	"github.com/exocortex/exocortex/sdk/internal/hookgen"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "genhooks:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("genhooks", flag.ContinueOnError)
	grpcFile := fl.String("grpc", "../proto/exocortex/v1/plugin_grpc.pb.go", "the generated gRPC Go of plugin.proto, whose PluginServer comments document the hooks")
	out := fl.String("out", "hooks_gen.go", "Go file to write")
	py := fl.String("py", "", "Python module to write as well (empty: none)")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: genhooks [-grpc FILE] [-out FILE] [-py FILE]")
		fmt.Fprintln(fl.Output(), "Generates the SDKs' hook interfaces, RPC methods and hook sets from the protocol.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (see -help)", fl.Args())
	}
	src, err := os.ReadFile(*grpcFile)
	if err != nil {
		return fmt.Errorf("reading the gRPC code (set -grpc; run protoc first, as make generate does): %w", err)
	}
	docs, err := hookgen.Docs(src)
	if err != nil {
		return fmt.Errorf("%s: %w", *grpcFile, err)
	}
	hs, err := hookgen.Collect(docs)
	if err != nil {
		return err
	}
	goSrc, err := hookgen.Go(hs)
	if err != nil {
		return err
	}
	if err := genfile.WriteIfChanged(*out, goSrc); err != nil {
		return err
	}
	if *py != "" {
		return genfile.WriteIfChanged(*py, hookgen.Python(hs))
	}
	return nil
}
