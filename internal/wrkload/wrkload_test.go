package wrkload

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		out      string
		rps, p99 float64
		bad      int
		err      error
	}{
		{"clean", "  Latency Distribution\n     50%  1.20ms\n     99%  850.00us\nRequests/sec:   1234.50\n", 1234.5, 0.85, 0, nil},
		{"failures", "     99%    1.50s\n  Socket errors: connect 1, read 2, write 0, timeout 3\n  Non-2xx or 3xx responses: 4\nRequests/sec:     10.00\n", 10, 1500, 10, nil},
		{"no rate", "unable to connect to 127.0.0.1:1 Connection refused\n", 0, 0, 0, ErrNoRate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse(tt.out)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if r.RPS != tt.rps || r.P99ms != tt.p99 || r.Bad != tt.bad {
				t.Errorf("got rps %v p99 %v bad %d, want %v %v %d", r.RPS, r.P99ms, r.Bad, tt.rps, tt.p99, tt.bad)
			}
		})
	}
}
