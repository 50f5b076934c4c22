package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Process is one finished run of an agent.
type Process struct {
	// Output is what it wrote to stdout and stderr.
	Output string
	// Wall is exec to exit.
	Wall time.Duration
	// CPU is the user and system CPU of the process and every descendant it
	// waited for (wait4's rusage).
	CPU time.Duration
	// Err says why the run failed: killed past its limit, or a non-zero exit.
	Err error
}

// Start runs exe in dir with args and env (added to this process's) in a
// process group of its own, so a run past timeout is killed with every
// process under it. started is called with its pid once it runs (and not at
// all if it does not start); Start returns when it has exited.
func Start(ctx context.Context, exe string, args, env []string, dir string, timeout time.Duration, started func(pid int, t0 time.Time)) Process {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return Process{Err: fmt.Errorf("start %s: %w", exe, err)}
	}
	started(cmd.Process.Pid, t0)
	werr := cmd.Wait()
	p := Process{Output: out.String(), Wall: time.Since(t0)}
	if st := cmd.ProcessState; st != nil {
		p.CPU = st.UserTime() + st.SystemTime()
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		p.Err = fmt.Errorf("killed after %s: %s", timeout, Tail(p.Output, 240))
	case werr != nil:
		p.Err = fmt.Errorf("%w: %s", werr, Tail(p.Output, 240))
	}
	return p
}

// Tail is the last n bytes of s, trimmed.
func Tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

// Median of xs, 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// AppendOnce appends s (cut at 300 bytes) to xs unless it is there already.
func AppendOnce(xs []string, s string) []string {
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	for _, x := range xs {
		if x == s {
			return xs
		}
	}
	return append(xs, s)
}

// Ratio formats a ratio, "-" for none.
func Ratio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

// MS is d in milliseconds.
func MS(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
