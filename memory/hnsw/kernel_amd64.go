//go:build amd64 && !purego

package hnsw

import "golang.org/x/sys/cpu"

// useAVX2 is decided once: the assembly kernels need AVX2 and FMA.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func l2sqAVX2(a, b *float32, n int) float32

//go:noescape
func prefetch(p *float32, n int)

func dotKernel(a, b []float32) float32 {
	if useAVX2 {
		return dotAVX2(&a[0], &b[0], len(a))
	}
	return dotGo(a, b)
}

func l2sqKernel(a, b []float32) float32 {
	if useAVX2 {
		return l2sqAVX2(&a[0], &b[0], len(a))
	}
	return l2sqGo(a, b)
}
