package hnsw

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKernelsMatchPortable checks the platform kernels against the portable Go ones
// on every length from 0 to 300, so each tail path of the assembly is exercised.
func TestKernelsMatchPortable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 300; n++ {
		a := make([]float32, n)
		b := make([]float32, n)
		for i := range a {
			a[i] = r.Float32()*2 - 1
			b[i] = r.Float32()*2 - 1
		}
		var want, wantL2 float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
			d := float64(a[i]) - float64(b[i])
			wantL2 += d * d
		}
		if got := dot(a, b); math.Abs(float64(got)-want) > 1e-4*(1+math.Abs(want)) {
			t.Errorf("dot n=%d: got %v want %v", n, got, want)
		}
		if got := l2sq(a, b); math.Abs(float64(got)-wantL2) > 1e-4*(1+wantL2) {
			t.Errorf("l2sq n=%d: got %v want %v", n, got, wantL2)
		}
		if got := dotGo(a, b); math.Abs(float64(got)-want) > 1e-4*(1+math.Abs(want)) {
			t.Errorf("dotGo n=%d: got %v want %v", n, got, want)
		}
		if got := l2sqGo(a, b); math.Abs(float64(got)-wantL2) > 1e-4*(1+wantL2) {
			t.Errorf("l2sqGo n=%d: got %v want %v", n, got, wantL2)
		}
	}
}

func TestBuiltinDistances(t *testing.T) {
	a := []float32{1, 0, 0}
	b := []float32{0, 2, 0}
	if d := CosineDistance(a, b); math.Abs(float64(d)-1) > 1e-6 {
		t.Errorf("cosine of orthogonal vectors = %v, want 1", d)
	}
	if d := CosineDistance(a, []float32{3, 0, 0}); math.Abs(float64(d)) > 1e-6 {
		t.Errorf("cosine of parallel vectors = %v, want 0", d)
	}
	if d := EuclideanDistance(a, b); math.Abs(float64(d)-math.Sqrt(5)) > 1e-6 {
		t.Errorf("euclidean = %v, want sqrt(5)", d)
	}
	if kindOf(CosineDistance) != distCosine || kindOf(EuclideanDistance) != distEuclidean {
		t.Error("built-in distances not recognised")
	}
	if kindOf(func(a, b []float32) float32 { return 0 }) != distCustom {
		t.Error("a custom distance was taken for a built-in one")
	}
}

var sink float32

func BenchmarkDot100(b *testing.B) {
	x := make([]float32, 100)
	y := make([]float32, 100)
	for i := range x {
		x[i], y[i] = float32(i), float32(100-i)
	}
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			sink += dot(x, y)
		}
	})
	b.Run("portable", func(b *testing.B) {
		for b.Loop() {
			sink += dotGo(x, y)
		}
	})
}
