// Package shell runs the operator's "!command" escapes under the same tiers
// the agent's shell commands are classified into (the action boundary,
// extensions/boundary: one classifier for both): a read-only command (tier 1:
// ls, cat, grep, git status, ...) runs without asking, as the agent's do; in
// yolo mode every command runs; a command allowed "for this session" earlier
// runs again without asking; any other is asked for, through the same
// loop.Approver the agent uses, with the exact command and its tier's rule.
//
// The command runs in the working directory under $SHELL -c (/bin/sh when
// unset), with no stdin, stdout and stderr captured together up to a limit,
// in its own process group so that a cancel (Ctrl+C) stops the command and
// everything it started, and, when Confine is set, in the sandbox (package
// sandbox) like the agent's own commands: yolo lifts the approvals, not the
// sandbox, and where the machine cannot sandbox every command is asked for.
package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/extensions/boundary"
	"github.com/exocortex/exocortex/sandbox"
)

// Tool is the tool name the approval request carries: the name of the agent's
// shell tool, so the dialog reads the same for both.
const Tool = "code_execution"

// Defaults.
const (
	DefaultTimeout   = 10 * time.Minute
	DefaultMaxOutput = 256 << 10
)

// ErrDenied is returned when the command was not allowed to run.
var ErrDenied = errors.New("not run: the operator denied it")

// Runner runs commands. The zero value is not usable: set Approver and Mode.
type Runner struct {
	// Approver asks the operator; nil refuses every command that needs asking.
	Approver loop.Approver
	// Mode returns the approval mode in force (it changes with /approval).
	Mode func() loop.ApprovalMode
	// Dir is the working directory ("" for the process's).
	Dir string
	// Shell runs the command with -c ("" for $SHELL, then /bin/sh).
	Shell string
	// Timeout bounds a command (DefaultTimeout when 0).
	Timeout time.Duration
	// MaxOutput bounds the captured output in bytes (DefaultMaxOutput when 0).
	MaxOutput int
	// Confine is the sandbox a command runs in under the local shell (nil:
	// none, for embedders that confine otherwise). Where the machine cannot
	// sandbox, every command is asked for, even in yolo mode.
	Confine *config.Confinement
	// Probe says whether the sandbox works here (sandbox.Probe when nil).
	Probe func() sandbox.Status

	mu      sync.Mutex
	allowed map[string]bool
	probed  *sandbox.Status
}

// Result is what a command did.
type Result struct {
	Command string
	// Output is stdout and stderr, interleaved as written, cut at MaxOutput.
	Output    string
	Truncated bool
	ExitCode  int
	Duration  time.Duration
	// Decision says why it ran: the mode, an earlier answer, or the operator.
	Decision string
}

// Exec runs a command that was allowed.
type Exec func(ctx context.Context, command string) (Result, error)

// Run decides whether command may run and runs it under the local shell. A
// denied command returns ErrDenied; a command that ran and failed returns its
// Result with a non-zero ExitCode and no error; ctx ending stops it.
func (r *Runner) Run(ctx context.Context, command string) (Result, error) {
	return r.RunWith(ctx, command, r.local)
}

// RunWith is Run with another way to run the command once it is allowed (the
// agent's own shell tool, for one).
func (r *Runner) RunWith(ctx context.Context, command string, exec Exec) (Result, error) {
	command = strings.TrimSpace(command)
	if command == "" {
		return Result{}, errors.New("no command after !: type !ls, for example")
	}
	why, err := r.decide(ctx, command)
	if err != nil {
		return Result{Command: command, Decision: why}, err
	}
	start := time.Now()
	res, err := exec(ctx, command)
	res.Command, res.Decision = command, why
	if res.Duration == 0 {
		res.Duration = time.Since(start)
	}
	return res, err
}

// local runs command under the shell, in its own process group.
func (r *Runner) local(ctx context.Context, command string) (Result, error) {
	res := Result{Command: command}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	sh := r.Shell
	if sh == "" {
		sh = os.Getenv("SHELL")
	}
	if sh == "" {
		sh = "/bin/sh"
	}
	limit := r.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	out := &capped{limit: limit}
	cmd := exec.CommandContext(ctx, sh, "-c", command)
	cmd.Dir = r.Dir
	cmd.Stdout, cmd.Stderr = out, out
	ownGroup(cmd)
	if c := r.Confine; c != nil && !c.Off && r.status().Available {
		if err := os.MkdirAll(c.ScratchDir, 0o700); err != nil {
			return res, fmt.Errorf("creating the scratch directory %s: %w", c.ScratchDir, err)
		}
		scratch, err := os.MkdirTemp(c.ScratchDir, "cmd-")
		if err != nil {
			return res, fmt.Errorf("creating a scratch directory for !%s: %w", command, err)
		}
		defer os.RemoveAll(scratch)
		p := c.Policy
		p.WriteRoots = append(append([]string(nil), p.WriteRoots...), scratch)
		cmd.Env = append(os.Environ(), "TMPDIR="+scratch)
		if err := sandbox.Wrap(cmd, p, ""); err != nil {
			return res, fmt.Errorf("confining !%s: %w", command, err)
		}
	} else if c != nil {
		// Unconfined (the sandbox is off or missing): a reaper still keeps every
		// process the command starts beneath it, setsid and nohup included, and
		// kills them when the command ends or is stopped, as the sandbox's PID
		// namespace does. Stopping signals the reaper, which cleans up first.
		// Outside Linux there is none, and the process group is all there is.
		if life, err := sandbox.Reap(cmd, ""); err == nil {
			defer life.Close()
			reaperOnly(cmd)
		}
	}
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err := cmd.Run()
	res.Duration = time.Since(start)
	res.Output, res.Truncated = out.buf.String(), out.cut
	var exit *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return res, fmt.Errorf("!%s stopped after %s: %w", command, res.Duration.Round(time.Millisecond), context.Cause(ctx))
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	default:
		return res, fmt.Errorf("running !%s with %s: %w", command, sh, err)
	}
	return res, nil
}

// decide applies the approval rules; it returns why the command may run, or
// ErrDenied.
func (r *Runner) decide(ctx context.Context, command string) (string, error) {
	mode := loop.ApprovalDefault
	if r.Mode != nil {
		mode = r.Mode()
	}
	r.mu.Lock()
	memo := r.allowed[command]
	r.mu.Unlock()
	unconfined := r.Confine != nil && !r.Confine.Off && !r.status().Available
	reason := "typed after ! in the session; it asks as the agent's shell tool does"
	if unconfined {
		// Yolo lifts the approvals, never the sandbox: without one, ask.
		mode = loop.ApprovalDefault
		reason = r.status().String() + ": the command would run with all your rights"
	}
	verdict := r.classify(command)
	if !unconfined {
		reason = fmt.Sprintf("tier %d (%s): typed after ! in the session; only read-only commands run without asking, as the agent's do", verdict.Tier, verdict.Rule)
	}
	switch {
	case mode == loop.ApprovalYolo:
		return "approval mode yolo", nil
	case memo:
		return "allowed earlier for this session", nil
	case verdict.Tier <= 1 && !unconfined:
		return "read-only (tier 1: " + verdict.Rule + "), so it runs without asking", nil
	case r.Approver == nil:
		return "", fmt.Errorf("%w (no operator to ask; choose --approval yolo to run commands without asking)", ErrDenied)
	}
	d, err := r.Approver.Approve(ctx, loop.Approval{
		Tool: Tool, Action: command,
		Reason: reason,
	})
	if err != nil {
		return "", fmt.Errorf("%w: the approval failed: %v", ErrDenied, err)
	}
	switch d {
	case loop.AllowSession:
		r.mu.Lock()
		if r.allowed == nil {
			r.allowed = map[string]bool{}
		}
		r.allowed[command] = true
		r.mu.Unlock()
		return "allowed for this session", nil
	case loop.AllowOnce:
		return "allowed once", nil
	}
	return "", ErrDenied
}

// classify tiers command as the agent's action boundary tiers the agent's
// shell commands, with the working directory (and the sandbox's scratch
// directory) as the bounds.
func (r *Runner) classify(command string) boundary.Verdict {
	b := boundary.Bounds{WorkDir: r.Dir}
	if b.WorkDir == "" {
		b.WorkDir, _ = os.Getwd()
	}
	if r.Confine != nil {
		b.Scratch = r.Confine.ScratchDir
	}
	return b.ClassifyShell(command)
}

// status is the sandbox's state on this machine, found once.
func (r *Runner) status() sandbox.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.probed == nil {
		probe := r.Probe
		if probe == nil {
			probe = func() sandbox.Status { return sandbox.Probe("") }
		}
		st := probe()
		r.probed = &st
	}
	return *r.probed
}

// capped keeps the first limit bytes written.
type capped struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
	cut   bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.limit - c.buf.Len()
	if room < len(p) {
		c.cut = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}
