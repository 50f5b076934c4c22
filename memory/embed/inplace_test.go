package embed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sameVectors fails unless got and want hold the same words, rows, lookups and
// vectors, bit for bit.
func sameVectors(t *testing.T, got, want *WordVectors) {
	t.Helper()
	if got.Len() != want.Len() || got.Dim != want.Dim || got.Checksum != want.Checksum || got.QuantBits != want.QuantBits ||
		max(got.SourceWords, got.Len()) != max(want.SourceWords, want.Len()) {
		t.Fatalf("got %d words of %d dims (checksum %08x, %d bits, source %d), want %d of %d (%08x, %d bits, source %d)",
			got.Len(), got.Dim, got.Checksum, got.QuantBits, got.SourceWords, want.Len(), want.Dim, want.Checksum, want.QuantBits, want.SourceWords)
	}
	if !sameFloats(got.PC, want.PC) {
		t.Errorf("principal component differs")
	}
	if got.harmonic() != want.harmonic() {
		t.Errorf("harmonic number %v, want %v", got.harmonic(), want.harmonic())
	}
	bad := 0
	for i := range want.Len() {
		w := want.Word(i)
		if got.Word(i) != w {
			t.Errorf("word %d is %q, want %q", i, got.Word(i), w)
			bad++
		}
		gi, gok := got.Lookup(w)
		wi, wok := want.Lookup(w)
		if gi != wi || gok != wok {
			t.Errorf("Lookup(%q) = %d, %v; want %d, %v", w, gi, gok, wi, wok)
			bad++
		}
		if !sameFloats(got.Vector(i), want.Vector(i)) {
			t.Errorf("word %d %q: vector %v, want %v", i, w, got.Vector(i)[:3], want.Vector(i)[:3])
			bad++
		}
		if bad > 10 {
			t.Fatal("too many differences")
		}
	}
	for _, w := range []string{"", "no-such-word-xyzzy", "\x00", strings.Repeat("a", 300)} {
		gi, gok := got.Lookup(w)
		wi, wok := want.Lookup(w)
		if gi != wi || gok != wok {
			t.Errorf("Lookup(%q) = %d, %v; want %d, %v", w, gi, gok, wi, wok)
		}
	}
}

func sameFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// sameEmbeddings fails unless embedders over got and want give the same model
// ids, weights and sentence vectors, bit for bit.
func sameEmbeddings(t *testing.T, got, want *WordVectors) {
	t.Helper()
	texts := []string{"", "the cat sat on the mat", "Quantum physics!", "zzzz unknown qqqq", "The Bank raised interest rates again."}
	if f, err := os.Open("testdata/triples.tsv"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			texts = append(texts, strings.Split(sc.Text(), "\t")...)
		}
		f.Close()
	}
	for _, cfg := range []GloVeConfig{{}, {PlainMean: true}, {KeepCommonComponent: true}, {SIFA: 1e-4}} {
		g, w := NewGloVe(got, cfg), NewGloVe(want, cfg)
		if g.ModelID() != w.ModelID() {
			t.Errorf("%+v: model id %s, want %s", cfg, g.ModelID(), w.ModelID())
		}
		for i := range min(want.Len(), 3000) {
			gw, gok := g.Weight(want.Word(i))
			ww, wok := w.Weight(want.Word(i))
			if math.Float32bits(gw) != math.Float32bits(ww) || gok != wok {
				t.Fatalf("%+v: weight of %q %v, want %v", cfg, want.Word(i), gw, ww)
			}
		}
		gv, _ := g.Embed(context.Background(), texts)
		wv, _ := w.Embed(context.Background(), texts)
		for i := range texts {
			if !sameFloats(gv[i], wv[i]) {
				t.Fatalf("%+v: %q embeds differently", cfg, texts[i])
			}
		}
		for _, word := range []string{"cat", "bank", "quantum", "the"} {
			a, aw, aok := g.WordVector(word)
			b, bw, bok := w.WordVector(word)
			if !sameFloats(a, b) || aw != bw || aok != bok {
				t.Errorf("%+v: WordVector(%q) differs", cfg, word)
			}
			if sa, sb := g.SimilarWords(word, 5, 0), w.SimilarWords(word, 5, 0); len(sa) != len(sb) || len(sa) > 0 && sa[0] != sb[0] {
				t.Errorf("%+v: SimilarWords(%q) = %v, want %v", cfg, word, sa, sb)
			}
		}
	}
}

// TestBuiltinInPlaceEqualsTheDecoder checks the compiled-in table used in place
// against the decoder it replaces, for every word: the same rows, lookups and
// vectors bit for bit, and the same embeddings and model ids.
func TestBuiltinInPlaceEqualsTheDecoder(t *testing.T) {
	inPlace, err := compactInPlace(builtinTable(), builtinIndex())
	if err != nil {
		t.Fatalf("the compiled-in index does not fit the compiled-in table (run make generate): %v", err)
	}
	decoded, err := DecodeCompact(builtinTable())
	if err != nil {
		t.Fatal(err)
	}
	sameVectors(t, inPlace, decoded)
	sameEmbeddings(t, inPlace, decoded)
	g, err := LoadBuiltin(GloVeConfig{})
	if err != nil || g.wv.place == nil || g.wv.Vectors != nil {
		t.Fatalf("LoadBuiltin does not use the table in place: %v", err)
	}
	if id := g.ModelID(); id != "glove-100d-sif:v1:a=0.001:pc1:compact-50000w-int8:ebad04c4" {
		t.Errorf("model id %s changed", id)
	}
}

// TestBuiltinIndexIsGenerated checks the committed index is what the generator
// makes from the committed table.
func TestBuiltinIndexIsGenerated(t *testing.T) {
	ix, err := BuildCompactIndex(builtinTable())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ix, builtinIndex()) {
		t.Fatal("compact/glove-compact.bin.idx is not what cmd/glovecompact makes from compact/glove-compact.bin: run `make generate` and commit it")
	}
}

// smallTable is a word-vector table with a principal component, a duplicate
// word (the first must win) and words of several lengths.
func smallTable(seed uint64) *WordVectors {
	r := rand.New(rand.NewPCG(seed, 1))
	words := []string{"the", ",", "cat", "sat", "on", "mat", "dog", "cat", "quantum", "physics", "é", "naïve", "x"}
	for i := range 300 {
		words = append(words, "w"+strings.Repeat("z", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	wv := &WordVectors{Dim: 6, Words: words, PC: []float32{1, 0, 0, 0, 0, 0}}
	for range words {
		for range wv.Dim {
			wv.Vectors = append(wv.Vectors, float32(r.NormFloat64()))
		}
	}
	wv.buildIndex()
	return wv
}

func writeTable(t *testing.T, path string, wv *WordVectors) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteWordVectors(&b, wv); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// captureLog sends slog's default output to a buffer for the test.
func captureLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// TestOpenWordVectorsInPlace checks a file used in place against the same file
// read into memory, and that the first load writes the index the next ones use.
func TestOpenWordVectorsInPlace(t *testing.T) {
	log := captureLog(t)
	path := filepath.Join(t.TempDir(), "vectors.bin")
	writeTable(t, path, smallTable(1))
	want, err := ReadWordVectors(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenWordVectors(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.place == nil || got.Words != nil {
		t.Fatal("OpenWordVectors did not use the file in place")
	}
	if !strings.Contains(log.String(), "made the word index") || !strings.Contains(log.String(), "none yet") {
		t.Errorf("the first load does not say it made the index: %q", log)
	}
	if _, err := os.Stat(path + IndexSuffix); err != nil {
		t.Fatalf("no index beside the file: %v", err)
	}
	sameVectors(t, got, want)
	sameEmbeddings(t, got, want)
	if i, ok := got.Lookup("cat"); !ok || i != 2 {
		t.Errorf("Lookup(cat) = %d, %v; want the first of the duplicates, 2", i, ok)
	}
	log.Reset()
	again, err := OpenWordVectors(path)
	if err != nil {
		t.Fatal(err)
	}
	if log.Len() != 0 {
		t.Errorf("the second load logged %q; it should use the index silently", log)
	}
	sameVectors(t, again, want)

	// A link to the file shares the index beside the real file.
	link := filepath.Join(t.TempDir(), "link.bin")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenWordVectors(link); err != nil || log.Len() != 0 {
		t.Errorf("through a link: %v, log %q", err, log)
	}
	// The written file can be written again from the table in place.
	var b bytes.Buffer
	if err := WriteWordVectors(&b, got); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(path)
	if !bytes.Equal(b.Bytes(), orig) {
		t.Error("WriteWordVectors of the table in place differs from the file")
	}
}

// TestWordIndexDamage checks that a missing, truncated, damaged, stale or
// foreign index is detected, said, and made again, and that the vectors read
// are the file's in every case.
func TestWordIndexDamage(t *testing.T) {
	other := filepath.Join(t.TempDir(), "other.bin")
	writeTable(t, other, smallTable(2))
	if _, err := OpenWordVectors(other); err != nil {
		t.Fatal(err)
	}
	otherIndex, err := os.ReadFile(other + IndexSuffix)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// damage changes the file at path or its index at path+IndexSuffix.
		damage func(t *testing.T, path string)
		want   string // in the log
	}{
		{"missing", func(t *testing.T, p string) { os.Remove(p + IndexSuffix) }, "none yet"},
		{"empty", func(t *testing.T, p string) { os.WriteFile(p+IndexSuffix, nil, 0o644) }, "too short"},
		{"truncated", func(t *testing.T, p string) { truncate(t, p+IndexSuffix, -9) }, "does not match the header"},
		{"one byte longer", func(t *testing.T, p string) { appendTo(t, p+IndexSuffix, 0) }, "does not match the header"},
		{"slot flipped", func(t *testing.T, p string) { flip(t, p+IndexSuffix, -3) }, "body checksum"},
		{"offset flipped", func(t *testing.T, p string) { flip(t, p+IndexSuffix, wiHeaderSize+5) }, "body checksum"},
		{"header flipped", func(t *testing.T, p string) { flip(t, p+IndexSuffix, 17) }, "header checksum"},
		{"bad magic", func(t *testing.T, p string) { flip(t, p+IndexSuffix, 0) }, "bad magic"},
		{"another version", func(t *testing.T, p string) { setVersion(t, p+IndexSuffix, wiVersion+1) }, "format version 2"},
		{"another file's index", func(t *testing.T, p string) { os.WriteFile(p+IndexSuffix, otherIndex, 0o644) }, "stale"},
		{"file replaced, same size", func(t *testing.T, p string) {
			wv := smallTable(1)
			wv.Vectors[0] += 1
			writeTable(t, p, wv)
			touch(t, p)
		}, "stale"},
		{"file touched", func(t *testing.T, p string) { touch(t, p) }, "stale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vectors.bin")
			writeTable(t, path, smallTable(1))
			if _, err := OpenWordVectors(path); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, path)
			log := captureLog(t)
			got, err := OpenWordVectors(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log.String(), "made the word index") || !strings.Contains(log.String(), tc.want) {
				t.Errorf("log %q does not say the index was made again because of %q", log, tc.want)
			}
			want, err := ReadWordVectors(path)
			if err != nil {
				t.Fatal(err)
			}
			sameVectors(t, got, want)
			log.Reset()
			if _, err := OpenWordVectors(path); err != nil || log.Len() != 0 {
				t.Errorf("after the rebuild: %v, log %q", err, log)
			}
		})
	}
}

// TestDamagedFileWithoutIndex checks that a damaged vector file is refused when
// its index is made (the whole file is checked then), and that a truncated one
// is refused at every load.
func TestDamagedFileWithoutIndex(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keepIndex bool
		damage    func(t *testing.T, path string)
		want      string
	}{
		{"vector flipped", false, func(t *testing.T, p string) { flip(t, p, -20) }, "body checksum"},
		{"word flipped", false, func(t *testing.T, p string) { flip(t, p, wvHeaderSize+4*314+2) }, "body checksum"},
		{"truncated", true, func(t *testing.T, p string) { truncate(t, p, -4) }, "does not match the header"},
		{"header flipped", true, func(t *testing.T, p string) { flip(t, p, 13) }, "header checksum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vectors.bin")
			writeTable(t, path, smallTable(1))
			if _, err := OpenWordVectors(path); err != nil {
				t.Fatal(err)
			}
			if !tc.keepIndex {
				os.Remove(path + IndexSuffix)
			}
			tc.damage(t, path)
			_, err := OpenWordVectors(path)
			if !errors.Is(err, ErrCorruptVectors) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v; want ErrCorruptVectors naming %s and %q", err, path, tc.want)
			}
		})
	}
}

// TestBuiltinIndexDamage checks that a compiled-in index that does not fit the
// table is made again (saying so), with the same vectors.
func TestBuiltinIndexDamage(t *testing.T) {
	table := builtinTable()
	small, err := EncodeCompact(smallTable(3), 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	smallIndex, err := BuildCompactIndex(small)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(builtinIndex())
	flipped[len(flipped)-5] ^= 1
	decoded, err := DecodeCompact(table)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		index []byte
		want  string
	}{
		{"none", nil, "too short"},
		{"damaged", flipped, "body checksum"},
		{"another table's", smallIndex, "stale"},
		{"truncated", builtinIndex()[:len(builtinIndex())-8], "does not match the header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := captureLog(t)
			wv, err := loadBuiltin(table, tc.index)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log.String(), "does not fit") || !strings.Contains(log.String(), tc.want) {
				t.Errorf("log %q does not say why the index was made again (%q)", log, tc.want)
			}
			if wv.place == nil {
				t.Error("not used in place")
			}
			for _, i := range []int{0, 1, 777, decoded.Len() - 1} {
				j, ok := wv.Lookup(decoded.Word(i))
				if !ok || j != i || !sameFloats(wv.Vector(i), decoded.Vector(i)) {
					t.Errorf("word %d %q: Lookup %d, %v", i, decoded.Word(i), j, ok)
				}
			}
		})
	}
	// A damaged table is refused, index or not.
	bad := bytes.Clone(small)
	bad[len(bad)-10] ^= 1
	if _, err := loadBuiltin(bad, smallIndex); !errors.Is(err, ErrCorruptVectors) {
		t.Errorf("a damaged table with a stale index: err = %v", err)
	}
	// A 4-bit table in place equals its decoder too.
	four, err := EncodeCompact(smallTable(4), 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	fourIndex, err := BuildCompactIndex(four)
	if err != nil {
		t.Fatal(err)
	}
	got, err := compactInPlace(four, fourIndex)
	if err != nil {
		t.Fatal(err)
	}
	want, err := DecodeCompact(four)
	if err != nil {
		t.Fatal(err)
	}
	sameVectors(t, got, want)
	sameEmbeddings(t, got, want)
}

func flip(t *testing.T, path string, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if at < 0 {
		at += len(b)
	}
	b[at] ^= 0x40
	rewrite(t, path, b)
}

func truncate(t *testing.T, path string, by int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rewrite(t, path, b[:len(b)+by])
}

func appendTo(t *testing.T, path string, x byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rewrite(t, path, append(b, x))
}

func setVersion(t *testing.T, path string, v uint32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[8], b[9], b[10], b[11] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	rewrite(t, path, b)
}

// rewrite replaces the file's bytes in place, keeping its modification time, so
// only the content tells the damage.
func rewrite(t *testing.T, path string, b []byte) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
}

func touch(t *testing.T, path string) {
	t.Helper()
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
}

// TestRealFileInPlaceEqualsRead checks the full GloVe file used in place
// against the same file read into memory, for every word.
func TestRealFileInPlaceEqualsRead(t *testing.T) {
	const real = "../../data/glove-100d.bin"
	if _, err := os.Stat(real); err != nil {
		t.Skipf("skipping: %s not found (run scripts/fetch-glove.sh or make glove)", real)
	}
	want, err := ReadWordVectors(real)
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenWordVectors(real)
	if err != nil {
		t.Fatal(err)
	}
	if got.place == nil {
		t.Fatal("not used in place")
	}
	sameVectors(t, got, want)
	sameEmbeddings(t, got, want)
	if id := NewGloVe(got, GloVeConfig{}).ModelID(); id != "glove-100d-sif:v1:a=0.001:pc1:638fe650" {
		t.Errorf("model id %s changed", id)
	}
}

// TestWordIndexInTheCache checks that where the index cannot be written beside
// the file, it goes to the user's cache directory and is used from there.
func TestWordIndexInTheCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	path := filepath.Join(t.TempDir(), "vectors.bin")
	writeTable(t, path, smallTable(1))
	// A directory where the index would go: it can be neither read nor replaced.
	if err := os.Mkdir(path+IndexSuffix, 0o755); err != nil {
		t.Fatal(err)
	}
	log := captureLog(t)
	got, err := OpenWordVectors(path)
	if err != nil {
		t.Fatal(err)
	}
	cached, _ := filepath.Glob(filepath.Join(cache, "exocortex", "vectors.bin-*"+IndexSuffix))
	if len(cached) != 1 || !strings.Contains(log.String(), cached[0]) {
		t.Fatalf("index in the cache %v; log %q", cached, log)
	}
	want, err := ReadWordVectors(path)
	if err != nil {
		t.Fatal(err)
	}
	sameVectors(t, got, want)
	log.Reset()
	if _, err := OpenWordVectors(path); err != nil || log.Len() != 0 {
		t.Errorf("the second load: %v, log %q (it should use the cached index silently)", err, log)
	}
}
