package recall

import (
	"math"
	"slices"
	"testing"
)

func TestSoftMatch(t *testing.T) {
	x, y := []float32{1, 0}, []float32{0, 1}
	diag := []float32{float32(math.Sqrt2 / 2), float32(math.Sqrt2 / 2)} // cos 0.707 to x and y
	for _, tc := range []struct {
		name  string
		query []WordVector
		text  [][]float32
		floor float64
		want  float64
	}{
		{"exact word counts its weight", []WordVector{{x, 2}}, [][]float32{y, x}, 0.5, 2},
		{"best word of the text counts, once", []WordVector{{x, 1}}, [][]float32{diag, x, x}, 0.5, 1},
		{"a near word counts its similarity", []WordVector{{x, 1}}, [][]float32{diag}, 0.5, math.Sqrt2 / 2},
		{"below the floor counts nothing", []WordVector{{x, 1}}, [][]float32{diag}, 0.8, 0},
		{"each query word adds", []WordVector{{x, 1}, {y, 0.5}}, [][]float32{x, y}, 0.5, 1.5},
		{"unrelated word counts nothing", []WordVector{{x, 1}}, [][]float32{y}, 0.1, 0},
		{"empty text", []WordVector{{x, 1}}, nil, 0.5, 0},
		{"empty query", nil, [][]float32{x}, 0.5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SoftMatch(tc.query, tc.text, tc.floor); math.Abs(got-tc.want) > 1e-6 {
				t.Fatalf("SoftMatch = %g, want %g", got, tc.want)
			}
		})
	}
}

func TestExpandWords(t *testing.T) {
	similar := func(w string) []WordSimilarity {
		return map[string][]WordSimilarity{
			"instruments": {{"instrument", 0.9}, {"violin", 0.6}, {"guitars", 0.5}},
			"play":        {{"playing", 0.8}, {"guitars", 0.7}},
		}[w]
	}
	// A toy analyzer: strips a plural s, drops "the".
	analyse := func(w string) []string {
		if w == "the" {
			return nil
		}
		if len(w) > 3 && w[len(w)-1] == 's' {
			w = w[:len(w)-1]
		}
		return []string{w}
	}
	for _, tc := range []struct {
		name    string
		words   []string
		inQuery map[string]bool
		boost   float64
		want    []string
		weights []float64
	}{
		{"similar words weighted boost times similarity, best first",
			[]string{"instruments"}, map[string]bool{"instrument": true}, 0.5,
			[]string{"violin", "guitar"}, []float64{0.3, 0.25}},
		{"a term from two words keeps its best weight",
			[]string{"instruments", "play"}, map[string]bool{"instrument": true, "play": true}, 1,
			[]string{"playing", "guitar", "violin"}, []float64{0.8, 0.7, 0.6}},
		{"no boost, no expansion", []string{"play"}, nil, 0, nil, nil},
		{"a word without neighbours adds nothing", []string{"melanie"}, nil, 1, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ExpandWords(tc.words, similar, analyse, tc.inQuery, tc.boost)
			if !slices.Equal(e.Terms, tc.want) {
				t.Fatalf("terms %v, want %v", e.Terms, tc.want)
			}
			for i, w := range tc.weights {
				if math.Abs(e.Weights[i]-w) > 1e-9 {
					t.Fatalf("weights %v, want %v", e.Weights, tc.weights)
				}
			}
		})
	}
}
