package scripted

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Vector is the embedding the scripted server returns for text: a unit vector
// of dims numbers built by feature hashing. Each lower-cased word adds ±1 at a
// position chosen by its hash, so texts that share words point in similar
// directions and a recall test can tell related memories from unrelated ones.
// Text without any word (or whose words cancel out) gets a vector derived from the hash of its bytes. It is
// deterministic and carries no meaning beyond shared words.
func Vector(text string, dims int) []float32 {
	if dims <= 0 {
		return nil
	}
	v := make([]float64, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		h := fnv.New64a()
		h.Write([]byte(w))
		sum := h.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%uint64(dims)] += sign
	}
	if isZero(v) {
		// No words, or words that cancelled out: counter-mode SHA-256 of the
		// text, arbitrary but fixed.
		var block [sha256.Size]byte
		for i := 0; i < dims; i++ {
			if i%8 == 0 {
				block = sha256.Sum256(binary.LittleEndian.AppendUint32([]byte(text), uint32(i/8)))
			}
			u := binary.LittleEndian.Uint32(block[(i%8)*4:])
			v[i] = float64(u)/math.MaxUint32*2 - 1
		}
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	out := make([]float32, dims)
	for i, x := range v {
		if norm > 0 {
			out[i] = float32(x / norm)
		}
	}
	return out
}

func isZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
