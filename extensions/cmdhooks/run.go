package cmdhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/toolsettings"
)

// FailureKind says how a hook could not run or answer.
type FailureKind string

// The ways a hook can fail; each is reported, and at a blocking event stops
// the action unless the hook is fail_open.
const (
	Missing       FailureKind = "missing"        // the command or script does not exist (the shell's 127)
	NotExecutable FailureKind = "not_executable" // it exists but cannot be run (126)
	TimedOut      FailureKind = "timed_out"
	Crashed       FailureKind = "crashed" // ended by a signal
	TooMuchOutput FailureKind = "output_over_limit"
	Unparseable   FailureKind = "unparseable_output"
	StartFailed   FailureKind = "start_failed"
)

// Failure is a hook that could not run or whose answer cannot be used.
type Failure struct {
	Kind   FailureKind
	Hook   Hook
	Detail string
}

func (f *Failure) Error() string {
	return fmt.Sprintf("command hook %s (%s) %s: %s", f.Hook.Ext(), f.Hook.Where(), f.Kind, f.Detail)
}

// Run is one run of a hook's command.
type Run struct {
	ExitCode       int
	Stdout, Stderr []byte
	Took           time.Duration
}

// Runner runs hook commands.
type Runner struct {
	// MaxOutput bounds stdout and stderr, each.
	MaxOutput int
	// Base is the environment the command starts from, less the plugin's
	// own variables (nil: this process's environment).
	Base []string
	// Env is added to it (CLAUDE_PROJECT_DIR, ...).
	Env []string
	// Dir is the working directory (the project).
	Dir string
}

// capped collects up to limit bytes and remembers that more came.
type capped struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room < len(p) {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil // keep reading, so the hook is not stopped by a broken pipe
	}
	return c.buf.Write(p)
}

// Exec runs h's command through sh -c (as the tools do: pipes, ~ and
// variables work) with input on stdin, in its own process group, killed at
// its deadline.
func (r Runner) Exec(ctx context.Context, h Hook, input []byte) (Run, error) {
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	cmd := exec.Command("/bin/sh", "-c", h.Command)
	cmd.Dir = r.Dir
	base := r.Base
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = append(hookEnviron(base), r.Env...)
	cmd.Stdin = bytes.NewReader(input)
	stdout, stderr := &capped{limit: r.MaxOutput}, &capped{limit: r.MaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Run{}, &Failure{Kind: StartFailed, Hook: h, Detail: err.Error()}
	}
	done := make(chan error, 1)
	var once sync.Once
	kill := func() { once.Do(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }) }
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		kill()
		<-done
		run := Run{Took: time.Since(start), Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.Bytes()}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return run, &Failure{Kind: TimedOut, Hook: h, Detail: fmt.Sprintf("no answer within its timeout of %s; it was killed", h.Timeout)}
		}
		return run, &Failure{Kind: StartFailed, Hook: h, Detail: "canceled: " + ctx.Err().Error()}
	}
	run := Run{Took: time.Since(start), Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.Bytes()}
	if stdout.over || stderr.over {
		return run, &Failure{Kind: TooMuchOutput, Hook: h, Detail: fmt.Sprintf("printed more than %d bytes (command_hooks.max_output_bytes); none of its output is used", r.MaxOutput)}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return run, &Failure{Kind: Crashed, Hook: h, Detail: fmt.Sprintf("was killed by signal %s%s", ws.Signal(), tail(run.Stderr))}
		}
		run.ExitCode = ee.ExitCode()
	} else if err != nil {
		return run, &Failure{Kind: StartFailed, Hook: h, Detail: err.Error()}
	}
	switch run.ExitCode {
	case 127:
		return run, &Failure{Kind: Missing, Hook: h, Detail: "the command was not found (exit 127)" + tail(run.Stderr)}
	case 126:
		return run, &Failure{Kind: NotExecutable, Hook: h, Detail: "the command is not executable (exit 126; chmod +x it)" + tail(run.Stderr)}
	}
	if run.ExitCode > 128 && run.ExitCode < 160 {
		// The shell's report of a child ended by signal N: 128+N.
		return run, &Failure{Kind: Crashed, Hook: h, Detail: fmt.Sprintf("was killed by signal %s (exit %d)%s", syscall.Signal(run.ExitCode-128), run.ExitCode, tail(run.Stderr))}
	}
	return run, nil
}

// hookEnviron is the plugin's environment without what is the host's and
// the plugin's own business: the settings the host sent
// (toolsettings.EnvSettings), go-plugin's handshake variables and the
// protocol's magic cookie.
func hookEnviron(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == toolsettings.EnvSettings || k == protocol.Handshake().MagicCookieKey || strings.HasPrefix(k, "PLUGIN_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// tail is the end of a hook's stderr, for a failure's detail.
func tail(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	if len(b) > 300 {
		b = append([]byte("…"), b[len(b)-300:]...)
	}
	return ": " + string(b)
}

var _ io.Writer = (*capped)(nil)
