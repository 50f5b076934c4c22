// Package wrkload runs the wrk HTTP load generator (Debian's wrk) and reads
// its figures: requests a second, the 99th percentile latency, and every
// request that failed. The load tests of serve's surfaces use it, so that a
// non-2xx answer or a socket error under load is counted, never skipped.
package wrkload

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
)

// Result is what one wrk run measured.
type Result struct {
	// RPS is the requests a second wrk completed.
	RPS float64
	// P99ms is the 99th percentile latency in milliseconds.
	P99ms float64
	// Bad counts the answers that were not 2xx or 3xx and the socket
	// errors (connect, read, write, timeout).
	Bad int
	// Raw is wrk's whole output, for a failure's message.
	Raw string
}

// ErrNoRate is returned when wrk's output has no request rate: it ran no
// request or its output format changed.
var ErrNoRate = errors.New("wrk's output has no Requests/sec line")

var (
	rps = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	p99 = regexp.MustCompile(`\s99%\s+([0-9.]+)(us|ms|s)`)
	bad = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)|Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// Run runs wrk for secs seconds with conns connections (two threads) on url,
// its requests made by the Lua script at script.
func Run(ctx context.Context, url, script string, secs, conns int) (Result, error) {
	out, err := exec.CommandContext(ctx, "wrk", "-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", secs),
		"--timeout", "30s", "--latency", "-s", script, url).CombinedOutput()
	if err != nil {
		return Result{Raw: string(out)}, fmt.Errorf("wrk on %s with %s: %w\n%s", url, script, err, out)
	}
	return Parse(string(out))
}

// Parse reads wrk's output.
func Parse(out string) (Result, error) {
	r := Result{Raw: out}
	m := rps.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("%w:\n%s", ErrNoRate, out)
	}
	r.RPS, _ = strconv.ParseFloat(m[1], 64)
	if m := p99.FindStringSubmatch(out); m != nil {
		v, _ := strconv.ParseFloat(m[1], 64)
		r.P99ms = map[string]float64{"us": v / 1000, "ms": v, "s": v * 1000}[m[2]]
	}
	for _, m := range bad.FindAllStringSubmatch(out, -1) {
		for _, s := range m[1:] {
			n, _ := strconv.Atoi(s)
			r.Bad += n
		}
	}
	return r, nil
}
