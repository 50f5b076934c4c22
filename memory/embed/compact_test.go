package embed_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/internal/procstat"
	"github.com/exocortex/exocortex/memory/embed"
)

// TestCompactRoundTrip quantises the fixture's vectors and decodes them: the
// words, their order, the common component and the vocabulary size survive, and
// every value is within half a quantisation step of the original.
func TestCompactRoundTrip(t *testing.T) {
	wv := loadFixture(t)
	pc, err := embed.CommonComponent(wv, embed.DefaultSIFA, 200, 6, 1)
	if err != nil {
		t.Fatal(err)
	}
	wv.PC = pc
	for _, tc := range []struct {
		name       string
		n, bits    int
		wantWords  int
		minCosine  float64
		wantSource int
	}{
		{"all words, 8 bits", 0, 8, 15, 0.9999, 15},
		{"first 6 words, 8 bits", 6, 8, 6, 0.9999, 15},
		{"all words, 4 bits", 0, 4, 15, 0.98, 15},
		{"first word, 4 bits", 1, 4, 1, 0.98, 15},
		{"more words than there are", 99, 8, 15, 0.9999, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blob, err := embed.EncodeCompact(wv, tc.n, tc.bits)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := embed.EncodeCompact(wv, tc.n, tc.bits)
			if !bytes.Equal(blob, again) {
				t.Error("two encodings of the same vectors differ")
			}
			got, err := embed.DecodeCompact(blob)
			if err != nil {
				t.Fatal(err)
			}
			if got.Len() != tc.wantWords || got.Dim != wv.Dim || got.SourceWords != tc.wantSource || got.QuantBits != tc.bits {
				t.Fatalf("decoded %d words of %d dimensions from %d, %d bits; want %d of %d from %d, %d bits",
					got.Len(), got.Dim, got.SourceWords, got.QuantBits, tc.wantWords, wv.Dim, tc.wantSource, tc.bits)
			}
			step := 1 / float64(int(1)<<(tc.bits-1)-1)
			for i := range got.Len() {
				if got.Words[i] != wv.Words[i] {
					t.Errorf("word %d is %q, want %q", i, got.Words[i], wv.Words[i])
				}
				if j, ok := got.Lookup(wv.Words[i]); !ok || j != i {
					t.Errorf("Lookup(%q) = %d, %v", wv.Words[i], j, ok)
				}
				orig, q := wv.Vector(i), got.Vector(i)
				var m float64
				for _, x := range orig {
					m = math.Max(m, math.Abs(float64(x)))
				}
				for j := range orig {
					if d := math.Abs(float64(orig[j] - q[j])); d > m*step/2+1e-6 {
						t.Errorf("word %q value %d: %v decoded as %v, more than half a step (%v) off", wv.Words[i], j, orig[j], q[j], m*step/2)
					}
				}
				if c := cosine(orig, q); c < tc.minCosine {
					t.Errorf("word %q: cosine with the original %.5f < %v", wv.Words[i], c, tc.minCosine)
				}
			}
			if !slicesEqual(got.PC, wv.PC) {
				t.Errorf("common component %v, want %v", got.PC, wv.PC)
			}
			info, err := embed.ReadCompactInfo(blob)
			if err != nil || info.Words != tc.wantWords || info.Bits != tc.bits || info.Bytes != len(blob) || info.SourceChecksum != wv.Checksum {
				t.Errorf("ReadCompactInfo = %+v, %v", info, err)
			}
		})
	}
}

func slicesEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCompactCorrupt damages a table in each way a file can be damaged: every one
// is an ErrCorruptVectors naming what is wrong, never a panic or wrong vectors.
func TestCompactCorrupt(t *testing.T) {
	wv := loadFixture(t)
	good, err := embed.EncodeCompact(wv, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	reheader := func(b []byte) []byte { // a header edit with a valid header checksum
		binary.LittleEndian.PutUint32(b[60:], crc32.Checksum(b[:60], castagnoli))
		return b
	}
	rebody := func(b []byte) []byte { // a body edit with a valid body checksum
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[64:len(b)-4], castagnoli))
		return b
	}
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte
		want   string
	}{
		{"empty", func(b []byte) []byte { return nil }, "too short"},
		{"truncated", func(b []byte) []byte { return b[:len(b)-10] }, "does not match the header"},
		{"appended", func(b []byte) []byte { return append(b, 0) }, "does not match the header"},
		{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }, "bad magic"},
		{"header bit flip", func(b []byte) []byte { b[16] ^= 1; return b }, "header checksum"},
		{"body bit flip", func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b }, "body checksum"},
		{"trailer bit flip", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, "body checksum"},
		{"newer version", func(b []byte) []byte { b[8] = 9; return reheader(b) }, "version 9"},
		{"3-bit values", func(b []byte) []byte { b[36] = 3; return reheader(b) }, "bits per value"},
		{"more words than the source", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[20:], 3); return reheader(b) }, "does not match the header"},
		{"word lengths past the vocabulary", func(b []byte) []byte { b[64] = 200; return rebody(b) }, "runs past the vocabulary"},
		{"word lengths short of the vocabulary", func(b []byte) []byte { b[64]--; return rebody(b) }, "header says"},
		{"non-finite scale", func(b []byte) []byte {
			n, vocab := 15, int(binary.LittleEndian.Uint32(b[32:]))
			binary.LittleEndian.PutUint32(b[64+n+vocab:], math.Float32bits(float32(math.Inf(1))))
			return rebody(b)
		}, "scale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.damage(bytes.Clone(good))
			_, err := embed.DecodeCompact(bad)
			if !errors.Is(err, embed.ErrCorruptVectors) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeCompact: %v; want ErrCorruptVectors saying %q", err, tc.want)
			}
			// The same through a file: ReadWordVectors names the file.
			path := filepath.Join(t.TempDir(), "damaged.bin")
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := embed.LoadGloVe(path, embed.GloVeConfig{}); tc.name != "empty" && (!errors.Is(err, embed.ErrCorruptVectors) || !strings.Contains(err.Error(), path)) {
				t.Errorf("LoadGloVe: %v; want ErrCorruptVectors naming %s", err, path)
			}
		})
	}
	if _, err := embed.EncodeCompact(wv, 0, 6); err == nil || !strings.Contains(err.Error(), "8 or 4") {
		t.Errorf("EncodeCompact with 6 bits: %v", err)
	}
}

// TestCompactFileIsAnotherEmbedder loads a compact table from a file: it weighs
// words as the full vectors do (by rank among all the source's words), embeds
// almost as they do, and has another model id and description, so a store moving
// between them re-embeds.
func TestCompactFileIsAnotherEmbedder(t *testing.T) {
	wv := loadFixture(t)
	wv.PC, _ = embed.CommonComponent(wv, embed.DefaultSIFA, 200, 6, 1)
	dir := t.TempDir()
	full := filepath.Join(dir, "full.bin")
	var buf bytes.Buffer
	if err := embed.WriteWordVectors(&buf, wv); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	wv, _ = embed.ReadWordVectors(full) // with its checksum
	blob, err := embed.EncodeCompact(wv, 12, 8)
	if err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.bin")
	if err := os.WriteFile(small, blob, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := embed.LoadGloVe(full, embed.GloVeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := embed.LoadGloVe(small, embed.GloVeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if f.ModelID() == c.ModelID() || !strings.Contains(c.ModelID(), "compact-12w-int8") {
		t.Errorf("model ids %q and %q: the compact one must differ and say so", f.ModelID(), c.ModelID())
	}
	if got, want := embed.Describe(c), "glove (compact, 12 words, "+small+")"; got != want {
		t.Errorf("Describe(compact file) = %q, want %q", got, want)
	}
	if got, want := embed.Describe(f), "glove ("+full+")"; got != want {
		t.Errorf("Describe(full file) = %q, want %q", got, want)
	}
	for spec, want := range map[embed.Spec]string{"glove:" + embed.Spec(small): embed.Describe(c), "glove:" + embed.Spec(full): embed.Describe(f)} {
		if got := embed.DescribeSpec(spec, ""); got != want {
			t.Errorf("DescribeSpec(%q) = %q, want %q (what the loaded embedder says)", spec, got, want)
		}
	}
	for _, w := range wv.Words[:12] {
		a, _ := f.Weight(w)
		b, ok := c.Weight(w)
		if !ok || a != b {
			t.Errorf("weight of %q: full %v, compact %v (%v)", w, a, b, ok)
		}
	}
	if _, ok := c.Weight(wv.Words[14]); ok {
		t.Errorf("%q is past the 12 words kept but has a weight", wv.Words[14])
	}
	text := "the kitten sat with the dog"
	fv, _ := f.EmbedText(text)
	cv, known := c.EmbedText(text)
	if !known || cosine(fv, cv) < 0.999 {
		t.Errorf("%q: compact vector's cosine with the full one %.5f (known %v)", text, cosine(fv, cv), known)
	}
}

// isolate leaves no full word-vector file where Open looks: no $EXOCORTEX_GLOVE,
// an empty home and an empty user data directory.
func isolate(t *testing.T) (home, data string) {
	t.Helper()
	t.Setenv(embed.GloVeEnv, "")
	data = t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	return t.TempDir(), filepath.Join(data, "exocortex")
}

// TestOpenAutoFallsBackToTheBuiltinTable opens the default spec with no full
// file anywhere: the store gets the compiled-in vectors, and the welcome card's
// DescribeSpec and the CLI's Describe say the same. A full file in the user data
// directory or the home wins over the table.
func TestOpenAutoFallsBackToTheBuiltinTable(t *testing.T) {
	home, data := isolate(t)
	ctx := context.Background()
	info, err := embed.BuiltinInfo()
	if err != nil {
		t.Fatal(err)
	}
	const want = "glove (compact, 50k words, built in)"
	if info.Words != embed.CompactWords || info.Bits != embed.CompactBits || info.Dim != 100 {
		t.Errorf("built-in table %+v; want %d words of 100 dimensions, %d bits", info, embed.CompactWords, embed.CompactBits)
	}
	for _, spec := range []embed.Spec{"", "auto", "glove:compact"} {
		e, err := embed.Open(ctx, spec, home)
		if err != nil {
			t.Fatalf("Open(%q): %v", spec, err)
		}
		g, ok := e.(*embed.GloVe)
		if !ok || !g.Compact() || g.Source() != embed.BuiltinSource || g.Words() != embed.CompactWords {
			t.Fatalf("Open(%q) = %#v; want the built-in compact GloVe", spec, e)
		}
		if got := embed.Describe(e); got != want {
			t.Errorf("Describe = %q, want %q", got, want)
		}
		if got := embed.DescribeSpec(spec, home); got != want {
			t.Errorf("DescribeSpec(%q) = %q, want %q", spec, got, want)
		}
	}
	if _, err := embed.Open(ctx, "glove", home); err == nil || !strings.Contains(err.Error(), "glove:compact") {
		t.Errorf(`Open("glove") without the file: %v; want an error pointing at glove:compact`, err)
	}

	// A full file where scripts/fetch-glove.sh links it, then one in the home.
	wv := loadFixture(t)
	var buf bytes.Buffer
	if err := embed.WriteWordVectors(&buf, wv); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{data, home} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, embed.GloVeFile)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := embed.Open(ctx, "auto", home)
		if err != nil {
			t.Fatal(err)
		}
		if g, ok := e.(*embed.GloVe); !ok || g.Compact() || g.Source() != path {
			t.Fatalf("with %s: Open(auto) = %#v; want the full file", path, e)
		}
		if got := embed.DescribeSpec("auto", home); got != "glove ("+path+")" {
			t.Errorf("DescribeSpec(auto) with %s = %q", path, got)
		}
		if got := embed.DescribeSpec("glove:compact", home); got != want {
			t.Errorf("DescribeSpec(glove:compact) with a full file = %q", got)
		}
	}
}

// TestBuiltinTableIsGenerated remakes the table from the full file and compares
// it with the committed one, byte for byte (skipped without the full file).
func TestBuiltinTableIsGenerated(t *testing.T) {
	if _, err := os.Stat(realFile); err != nil {
		t.Skipf("skipping: %s not found (run scripts/fetch-glove.sh or make glove)", realFile)
	}
	wv, err := embed.ReadWordVectors(realFile)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := embed.EncodeCompact(wv, embed.CompactWords, embed.CompactBits)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("compact/glove-compact.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(blob, committed) {
		t.Fatal("compact/glove-compact.bin is not what the generator makes from the full file: run `make generate` and commit it")
	}
	info, _ := embed.BuiltinInfo()
	if info.Bytes != len(committed) {
		t.Errorf("the compiled-in table has %d bytes, the file %d: rebuild", info.Bytes, len(committed))
	}
}

// TestBuiltinTableAgreesWithTheFullFile embeds the hand-written triples with both:
// the compact table is nearly as good at telling a paraphrase from a distractor
// (it loses words past the 50,000 most frequent).
func TestBuiltinTableAgreesWithTheFullFile(t *testing.T) {
	full := loadReal(t)
	compact, err := embed.LoadBuiltin(embed.GloVeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	f, c := tripleAccuracy(t, full), tripleAccuracy(t, compact)
	t.Logf("paraphrase nearer than distractor: full file %.3f, built-in table %.3f", f, c)
	if c < f-0.05 {
		t.Errorf("built-in table %.3f is more than 0.05 below the full file %.3f", c, f)
	}
	for _, w := range []string{"the", "kitten", "photosynthesis", "password"} {
		a, _ := full.Weight(w)
		b, ok := compact.Weight(w)
		if !ok || a != b {
			t.Errorf("weight of %q: full %v, compact %v (%v)", w, a, b, ok)
		}
	}
}

// BenchmarkLoadBuiltin measures what the first prompt pays for the built-in
// vectors: decoding and indexing the compiled-in table. cpu-ms/op (the process's
// user and system time, the garbage collector's included) is steadier than wall
// time on a loaded machine.
//
//	go test ./memory/embed -run '^$' -bench 'LoadBuiltin|LoadGloVe' -benchtime 5x
func BenchmarkLoadBuiltin(b *testing.B) {
	start := procstat.CPUTime()
	for b.Loop() {
		if _, err := embed.LoadBuiltin(embed.GloVeConfig{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(procstat.CPUTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
