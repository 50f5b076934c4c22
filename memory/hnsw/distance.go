package hnsw

import (
	"math"
	"reflect"
)

// Vector is a point in the index. Vectors are stored as float32.
type Vector = []float32

// DistanceFunc computes the distance between two vectors of equal length: smaller
// is nearer. The two built-in functions, CosineDistance and EuclideanDistance, are
// recognised by the graph and run through specialised kernels (unit vectors and a
// dot product for cosine, squared differences for Euclidean); any other function is
// called as given, which is slower, and cannot be exported by name.
type DistanceFunc func(a, b []float32) float32

// CosineDistance is 1 - cos(a, b), in [0, 2]. A zero vector has no direction: the
// distance to it is 1.
func CosineDistance(a, b []float32) float32 {
	if len(a) != len(b) {
		panic("hnsw: CosineDistance of vectors of different lengths")
	}
	ab := dot(a, b)
	na := dot(a, a)
	nb := dot(b, b)
	if na == 0 || nb == 0 {
		return 1
	}
	return 1 - ab/float32(math.Sqrt(float64(na)*float64(nb)))
}

// EuclideanDistance is the L2 distance between a and b.
func EuclideanDistance(a, b []float32) float32 {
	if len(a) != len(b) {
		panic("hnsw: EuclideanDistance of vectors of different lengths")
	}
	return float32(math.Sqrt(float64(l2sq(a, b))))
}

// distKind says which kernel a graph uses; it is also the code written to files.
type distKind uint8

const (
	distCosine    distKind = 1
	distEuclidean distKind = 2
	distCustom    distKind = 3
)

func (k distKind) String() string {
	switch k {
	case distCosine:
		return "cosine"
	case distEuclidean:
		return "euclidean"
	case distCustom:
		return "custom"
	}
	return "unknown"
}

// kindOf recognises the built-in distance functions by their code pointer.
func kindOf(fn DistanceFunc) distKind {
	if fn == nil {
		return distCosine
	}
	p := reflect.ValueOf(fn).Pointer()
	switch p {
	case reflect.ValueOf(CosineDistance).Pointer():
		return distCosine
	case reflect.ValueOf(EuclideanDistance).Pointer():
		return distEuclidean
	}
	return distCustom
}

// dot is the inner product of two equal-length vectors.
func dot(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	_ = b[len(a)-1]
	return dotKernel(a, b)
}

// l2sq is the squared Euclidean distance of two equal-length vectors.
func l2sq(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	_ = b[len(a)-1]
	return l2sqKernel(a, b)
}

// dotGo and l2sqGo are the portable kernels, unrolled by four so the compiler keeps
// four independent accumulators in registers.
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func l2sqGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0 := a[i] - b[i]
		d1 := a[i+1] - b[i+1]
		d2 := a[i+2] - b[i+2]
		d3 := a[i+3] - b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// Dot returns the inner product of two equal-length vectors, with the same kernel
// the graph uses (AVX2 and FMA on amd64 when available). It panics if b is shorter
// than a.
func Dot(a, b []float32) float32 { return dot(a, b) }
