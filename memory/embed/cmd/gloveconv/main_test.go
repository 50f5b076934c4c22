package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/memory/embed"
)

func TestConvertFixture(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sub", "glove.bin")
	if err := run([]string{"-in", "../../testdata/wink-small.json", "-out", out, "-pc-samples", "200"}); err != nil {
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
	err := run([]string{"-in", bad, "-out", out})
	if err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("error should name the input: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a failed conversion left an output file")
	}
	if err := run(nil); err == nil {
		t.Error("missing -in: no error")
	}
}
