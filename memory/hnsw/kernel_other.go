//go:build !amd64 || purego

package hnsw

func dotKernel(a, b []float32) float32  { return dotGo(a, b) }
func l2sqKernel(a, b []float32) float32 { return l2sqGo(a, b) }

func prefetch(p *float32, n int) {}
