// Command gensignals writes package signals from the front matter of the prompt
// files: one constant per declared signal, plus All and Known. With -py it also
// writes the Python SDK's constants module from the same declarations.
//
// It runs through go generate in package signals:
//
//	go run ./internal/gensignals -prompts ../prompts -out signals_gen.go -py ../sdk/python/exocortex/signals.py
//
// Files are rewritten only when their content changes.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/exocortex/exocortex/internal/genfile"
	"github.com/exocortex/exocortex/signals/internal/gen"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gensignals:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("gensignals", flag.ContinueOnError)
	promptDir := fl.String("prompts", "../prompts", "directory of the prompt files (*.md) to read")
	out := fl.String("out", "signals_gen.go", "Go file to write")
	py := fl.String("py", "", "Python module to write as well (empty: none)")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: gensignals [-prompts DIR] [-out FILE] [-py FILE]")
		fmt.Fprintln(fl.Output(), "Generates the signal constants from the signal: lines of prompt front matter.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (see -help)", fl.Args())
	}
	info, err := os.Stat(*promptDir)
	if err != nil || !info.IsDir() {
		return fmt.Errorf("prompt directory %s: not a readable directory (set -prompts)", *promptDir)
	}
	sigs, err := gen.Collect(os.DirFS(*promptDir), filepath.Base(*promptDir))
	if err != nil {
		return fmt.Errorf("reading %s: %w", *promptDir, err)
	}
	src, err := gen.Go(sigs)
	if err != nil {
		return err
	}
	if err := genfile.WriteIfChanged(*out, src); err != nil {
		return err
	}
	if *py != "" {
		if err := genfile.WriteIfChanged(*py, gen.Python(sigs)); err != nil {
			return err
		}
	}
	return nil
}
