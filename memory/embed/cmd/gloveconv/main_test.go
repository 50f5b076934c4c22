package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/memory/embed"
)

func TestConvertFixture(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sub", "glove.bin")
	var progress bytes.Buffer
	if err := run([]string{"-in", "../../testdata/wink-small.json", "-out", out, "-pc-samples", "200"}, &progress); err != nil {
		t.Fatal(err)
	}
	wv, err := embed.ReadWordVectors(out)
	if err != nil {
		t.Fatal(err)
	}
	if wv.Len() != 15 || wv.Dim != 4 || wv.Words[0] != "the" || len(wv.PC) != 4 {
		t.Fatalf("converted file: %d words, %d dims, first %q, pc %d", wv.Len(), wv.Dim, wv.Words[0], len(wv.PC))
	}
	if _, err := os.Stat(out + embed.IndexSuffix); err != nil {
		t.Errorf("no word index beside the converted file: %v", err)
	}
	st, _ := os.Stat(out)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	// Progress is plain lines for the person running make run, no log records.
	for _, l := range strings.Split(strings.TrimSpace(progress.String()), "\n") {
		if !strings.HasPrefix(l, "gloveconv: ") || strings.Contains(l, "level=") {
			t.Errorf("progress line %q", l)
		}
	}
	if !strings.Contains(progress.String(), "gloveconv: wrote "+out) {
		t.Errorf("progress:\n%s", progress.String())
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".gloveconv-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestConvertBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"dimensions":4,"l2NormIndex":4,"wordIndex":5,"words":["a"],"vectors":{"a":[1,2]}}`), 0o644)
	out := filepath.Join(dir, "out.bin")
	err := run([]string{"-in", bad, "-out", out}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("error should name the input: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a failed conversion left an output file")
	}
	if err := run(nil, io.Discard); err == nil {
		t.Error("missing -in: no error")
	}
}
