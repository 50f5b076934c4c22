package codeexec

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sandbox"
)

// maxPending bounds the output buffered between the shell and a call (output a
// background job writes while no call runs, or output faster than it is
// consumed); beyond it the oldest bytes are dropped and counted.
const maxPending = 4 << 20

// session is one persistent shell.
type session struct {
	// mu is held while a command runs: one command at a time per session.
	mu sync.Mutex

	cmd   *exec.Cmd
	pid   int
	stdin io.WriteCloser
	// watch is the plugin's end of the watcher's pipe, or of the reaper's
	// lifeline (nil where there is neither); closing it makes the watcher or
	// the reaper kill the session.
	watch   io.Closer
	scratch string
	// confined is set when the shell runs in the sandbox: shell is then the
	// shell's own pid (pid is the launcher's, the namespace's init) and ns its
	// PID namespace, every process of which the time limit kills.
	confined bool
	// reaped is set when the shell runs without the sandbox under a reaper
	// (sandbox.Reap): pid is the reaper's, shell the shell's, and the time
	// limit kills every process beneath the reaper but the shell.
	reaped bool
	shell  int
	ns     string
	// nsPin holds the sandbox's PID namespace open until the session is
	// killed: the kernel gives a freed namespace's id to the next one made,
	// and a sweep by the id of one that had ended (the shell exited) would
	// kill the processes of the next session's sandbox, its shell first.
	nsPin  io.Closer
	token  string
	marker []byte // "\n" + token + " "
	cells  int

	omu      sync.Mutex // guards the fields below
	pending  []byte
	dropped  int64
	eof      bool
	cwd      string
	used     time.Time
	notify   chan struct{} // signalled when output arrives or the pipe closes
	exited   chan struct{} // closed when the shell has exited
	waitErr  error
	killOnce sync.Once
	killed   []proc
}

// startSession starts a shell in dir, in the sandbox unless confine is nil,
// from the environment env (nil: this process's). The session's scratch
// directory (its cells, and TMPDIR) is made in scratchBase.
func startSession(shell, dir, scratchBase string, confine *sandbox.Policy, env []string) (*session, error) {
	path, err := exec.LookPath(shell)
	if err != nil {
		return nil, fmt.Errorf("the shell %q is not installed or not on PATH: install it or set tools.code_execution.shell", shell)
	}
	if err := os.MkdirAll(scratchBase, 0o700); err != nil {
		return nil, fmt.Errorf("creating the scratch directory %s: %w (set tools.sandbox.scratch_dir)", scratchBase, err)
	}
	scratch, err := os.MkdirTemp(scratchBase, "code-")
	if err != nil {
		return nil, fmt.Errorf("creating a scratch directory for the session in %s: %w", scratchBase, err)
	}
	token := "EXOCORTEX_DONE_" + rand.Text()
	s := &session{
		scratch: scratch,
		token:   token,
		marker:  []byte("\n" + token + " "),
		cwd:     dir,
		used:    time.Now(),
		notify:  make(chan struct{}, 1),
		exited:  make(chan struct{}),
	}
	var argv []string
	if filepath.Base(path) == "bash" {
		argv = []string{"--noprofile", "--norc"}
	}
	cmd := exec.Command(path, argv...)
	cmd.Dir = dir
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.Clip(env), "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "PYTHONUNBUFFERED=1", "TMPDIR="+scratch)
	cmd.SysProcAttr = sysProcAttr()
	if confine != nil {
		p := *confine
		p.WriteRoots = append(append([]string(nil), p.WriteRoots...), scratch)
		if err := sandbox.Wrap(cmd, p, ""); err != nil {
			os.RemoveAll(scratch)
			return nil, fmt.Errorf("confining the shell: %w", err)
		}
		s.confined = true
	} else if life, err := sandbox.Reap(cmd, ""); err == nil {
		s.watch, s.reaped = life, true
	}
	r, w, err := os.Pipe()
	if err != nil {
		os.RemoveAll(scratch)
		return nil, fmt.Errorf("creating the session's output pipe: %w", err)
	}
	// One pipe for both streams keeps their order.
	cmd.Stdout, cmd.Stderr = w, w
	stdin, err := cmd.StdinPipe()
	if err != nil {
		r.Close()
		w.Close()
		os.RemoveAll(scratch)
		return nil, fmt.Errorf("creating the session's input pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		os.RemoveAll(scratch)
		return nil, fmt.Errorf("starting %s in %s: %w", path, dir, err)
	}
	w.Close()
	s.cmd, s.pid, s.stdin = cmd, cmd.Process.Pid, stdin
	switch {
	case s.confined:
		// The launcher's one child is the shell; the launcher execs it at once.
		s.shell = childOf(s.pid, 10*time.Second)
		s.ns, s.nsPin = pinPIDNS(s.pid)
	case s.reaped:
		// The reaper's one child is the shell; its lifeline does the
		// watcher's work (a watcher would kill the reaper, a session leader,
		// before the reaper could kill what left the session).
		s.shell = childOf(s.pid, 10*time.Second)
	}
	if s.watch == nil {
		if watch, _, err := startWatcher(s.pid); err == nil && watch != nil {
			s.watch = watch
		}
	}
	go s.read(r)
	go func() {
		err := cmd.Wait()
		s.omu.Lock()
		s.waitErr = err
		s.omu.Unlock()
		close(s.exited)
	}()
	return s, nil
}

// read moves the shell's output into pending until the pipe closes (when the
// shell and everything holding the pipe have exited).
func (s *session) read(r *os.File) {
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		s.omu.Lock()
		if n > 0 {
			s.pending = append(s.pending, buf[:n]...)
			if over := len(s.pending) - maxPending; over > 0 {
				s.dropped += int64(over)
				s.pending = append(s.pending[:0], s.pending[over:]...)
			}
		}
		if err != nil {
			s.eof = true
		}
		s.omu.Unlock()
		s.signal()
		if err != nil {
			return
		}
	}
}

func (s *session) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// take returns and clears the pending output, and whether the pipe is closed.
func (s *session) take() ([]byte, int64, bool) {
	s.omu.Lock()
	defer s.omu.Unlock()
	p, d := s.pending, s.dropped
	s.pending, s.dropped = nil, 0
	return p, d, s.eof
}

// unread puts output that followed the marker back (a background job's), for
// the next call.
func (s *session) unread(b []byte) {
	if len(b) == 0 {
		return
	}
	s.omu.Lock()
	s.pending = append(append([]byte(nil), b...), s.pending...)
	s.omu.Unlock()
}

func (s *session) touch() {
	s.omu.Lock()
	s.used = time.Now()
	s.omu.Unlock()
}

func (s *session) lastUsed() time.Time {
	s.omu.Lock()
	defer s.omu.Unlock()
	return s.used
}

func (s *session) lastCwd() string {
	s.omu.Lock()
	defer s.omu.Unlock()
	return s.cwd
}

func (s *session) exitedNow() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// exitStatus describes how the shell ended.
func (s *session) exitStatus() string {
	s.omu.Lock()
	defer s.omu.Unlock()
	if s.waitErr == nil {
		return "exit status 0"
	}
	return s.waitErr.Error()
}

// killMembers kills every process of the shell's session (and sandbox) but
// the shell.
func (s *session) killMembers() []proc {
	if s.reaped {
		return killDescendants(s.pid, eldestChild(s.pid, s.shell))
	}
	if !s.confined {
		return killMembers(s.pid, "", nil)
	}
	return killMembers(s.pid, s.ns, map[int]bool{s.shell: true})
}

// kill stops the shell, everything in its session and its process group, and
// removes the scratch files. It returns the processes other than the shell that
// were still running. Safe to call more than once.
func (s *session) kill() []proc {
	s.killOnce.Do(func() {
		var killed []proc
		if s.pid > 0 {
			// Killed (and so named) here before the shell's end of input, the
			// watcher or the reaper (which the closed pipes below set off)
			// would kill them unnamed.
			killed = s.killMembers()
		}
		if s.stdin != nil {
			_ = s.stdin.Close()
		}
		if s.watch != nil {
			_ = s.watch.Close()
		}
		if s.pid > 0 {
			killGroup(s.cmd)
			for range 3 {
				more := s.killMembers()
				if len(more) == 0 {
					break
				}
				killed = mergeProcs(killed, more)
			}
			select {
			case <-s.exited:
			case <-time.After(2 * time.Second):
			}
		}
		if s.nsPin != nil {
			// Swept for the last time: the namespace's id may be reused now.
			_ = s.nsPin.Close()
		}
		_ = os.RemoveAll(s.scratch)
		s.killed = killed
	})
	return s.killed
}

// outcome is what one command did.
type outcome struct {
	ran      string // the code's first line
	output   tail
	status   int
	cwd      string
	finished bool // the marker arrived
	exited   bool // the shell exited during the call
	dead     bool // the shell is gone or was killed: the session must be replaced
	reason   string
	limit    time.Duration
	killed   []proc
}

// exec runs one cell and collects its output until the marker, the time limit
// or the end of ctx.
// Every piece of output is passed to onOutput (when not nil) as it comes.
func (s *session) exec(ctx context.Context, runtime, program, code string, limit, grace time.Duration, onOutput func([]byte)) outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.touch()
	out := outcome{ran: firstLine(code), limit: limit, cwd: s.lastCwd()}
	out.output.onWrite = onOutput

	s.cells++
	file := scratchName(s.scratch, s.cells, runtime)
	if err := os.WriteFile(file, []byte(code), 0o600); err != nil {
		out.output.write([]byte(fmt.Sprintf("code_execution: writing the code to %s: %v\n", file, err)))
		out.status = -1
		return out
	}
	var line string
	switch runtime {
	case RuntimeTerminal:
		line = ". " + shellQuote(file)
	default:
		line = shellQuote(program) + " " + shellQuote(file)
	}
	line += " < /dev/null; " + s.markerCmd()

	// Output a background job wrote since the last call comes first, as in a
	// terminal.
	if _, err := io.WriteString(s.stdin, line); err != nil {
		out.exited, out.dead = true, true
		out.reason = fmt.Sprintf("the shell could not take the command (%v)", err)
		s.collectAfterExit(&out)
		return out
	}

	timer := time.NewTimer(limit)
	defer timer.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var carry []byte
	var interrupted bool
	var graceEnd time.Time
	for {
		chunk, dropped, eof := s.take()
		out.output.skip(dropped)
		carry = append(carry, chunk...)
		if done := s.scan(&carry, &out); done {
			if interrupted {
				// Sweep once more: a job started just before the marker. Then
				// let the shell report the jobs it lost ("Killed sleep 100")
				// in this call's output rather than the next one's.
				out.killed = mergeProcs(out.killed, s.killMembers())
				awaitDeath(out.killed, 500*time.Millisecond)
				s.flush(&out)
			}
			return out
		}
		if eof || s.exitedNow() {
			// Drain what is left, then report the exit.
			if !eof {
				select {
				case <-s.notify:
				case <-time.After(100 * time.Millisecond):
				}
				chunk, dropped, _ = s.take()
				out.output.skip(dropped)
				carry = append(carry, chunk...)
				if s.scan(&carry, &out) {
					return out
				}
			}
			out.output.write(carry)
			out.exited, out.dead = true, true
			if out.reason == "" {
				out.reason = "the shell exited (" + s.exitStatus() + ")"
			}
			if interrupted {
				out.killed = mergeProcs(out.killed, s.kill())
			}
			return out
		}
		if interrupted {
			out.killed = mergeProcs(out.killed, s.killMembers())
			if time.Now().After(graceEnd) {
				out.output.write(carry)
				out.dead = true
				out.killed = mergeProcs(out.killed, s.kill())
				return out
			}
			select {
			case <-s.notify:
			case <-tick.C:
			}
			continue
		}
		select {
		case <-s.notify:
		case <-timer.C:
			interrupted, graceEnd = true, time.Now().Add(grace)
			out.reason = fmt.Sprintf("the time limit of %s passed", limit)
			out.killed = s.killMembers()
		case <-ctx.Done():
			interrupted, graceEnd = true, time.Now().Add(grace)
			out.reason = fmt.Sprintf("the call was cancelled (%v)", context.Cause(ctx))
			out.killed = s.killMembers()
		}
	}
}

// markerCmd prints the marker line: a newline (so the marker starts a line
// whatever the output ended with), the token, the last exit status and the
// working directory.
func (s *session) markerCmd() string {
	return "printf '\\n" + s.token + " %d %s\\n' \"$?\" \"$PWD\"\n"
}

// flush runs a no-op through the shell after a timeout and adds what it printed
// before the marker (notices about background jobs that were killed) to out.
// The shell may take the news of a killed job only after that no-op, and would
// then print the notice in the next call's output; so flush also disowns the
// jobs, which the timeout killed all of, and whatever the shell has not
// reported by then it never will (the outcome lists the killed processes). It
// gives up quietly after a short while.
func (s *session) flush(out *outcome) {
	line := "disown -a 2>/dev/null; : < /dev/null; " + s.markerCmd()
	if _, err := io.WriteString(s.stdin, line); err != nil {
		return
	}
	var extra outcome
	extra.cwd = out.cwd
	var carry []byte
	deadline := time.After(time.Second)
	for {
		chunk, dropped, eof := s.take()
		extra.output.skip(dropped)
		carry = append(carry, chunk...)
		if s.scan(&carry, &extra) {
			text, _, _ := extra.output.text(extra.output.keep())
			out.output.write([]byte(text))
			return
		}
		if eof {
			return
		}
		select {
		case <-s.notify:
		case <-deadline:
			return
		}
	}
}

// scan looks for the marker line in carry. Output before it goes to out; when the
// whole line is there it fills in the status and directory, puts back what
// follows, and reports true. Without a marker, all but a possible marker prefix
// is moved to out (so output that stops for a while is reported at once).
func (s *session) scan(carry *[]byte, out *outcome) bool {
	c := *carry
	i := bytes.Index(c, s.marker)
	if i < 0 {
		if keep := markerPrefix(c, s.marker); len(c) > keep {
			out.output.write(c[:len(c)-keep])
			*carry = append([]byte(nil), c[len(c)-keep:]...)
		}
		return false
	}
	rest := c[i+len(s.marker):]
	j := bytes.IndexByte(rest, '\n')
	if j < 0 {
		out.output.write(c[:i])
		*carry = append([]byte(nil), c[i:]...)
		return false
	}
	out.output.write(c[:i])
	status, cwd, _ := strings.Cut(string(rest[:j]), " ")
	out.status, _ = strconv.Atoi(status)
	if cwd != "" {
		out.cwd = cwd
		s.omu.Lock()
		s.cwd = cwd
		s.omu.Unlock()
	}
	out.finished = true
	s.unread(rest[j+1:])
	*carry = nil
	return true
}

// markerPrefix is the length of the longest end of c that begins marker.
func markerPrefix(c, marker []byte) int {
	for n := min(len(c), len(marker)-1); n > 0; n-- {
		if bytes.HasPrefix(marker, c[len(c)-n:]) {
			return n
		}
	}
	return 0
}

// collectAfterExit gathers what the shell wrote before it exited.
func (s *session) collectAfterExit(out *outcome) {
	select {
	case <-s.exited:
	case <-time.After(time.Second):
	}
	chunk, dropped, _ := s.take()
	out.output.skip(dropped)
	out.output.write(chunk)
}

// toolResult renders the outcome for the model.
func (o outcome) toolResult(note string, limit, n int) (*exocortexv1.ToolResult, error) {
	var b strings.Builder
	if note != "" {
		b.WriteString(note + "\n")
	}
	text, total, truncated := o.output.text(limit)
	if truncated {
		fmt.Fprintf(&b, "[output truncated: %s bytes, showing the last %s]\n", commas(total), commas(int64(limit)))
	}
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	var err error
	switch {
	case o.reason != "" && o.finished:
		fmt.Fprintf(&b, "[stopped: %s while running `%s`; killed %s. The shell of session %d survived: its working directory (%s) and variables are kept.]",
			o.reason, o.ran, killedText(o.killed), n, o.cwd)
		err = fmt.Errorf("%s: %s; the command was killed", ToolName, o.reason)
	case o.reason != "" && o.exited:
		fmt.Fprintf(&b, "[stopped: %s while running `%s`; killed %s. Session %d starts a new shell in %s on the next call; variables set earlier are gone.]",
			o.reason, o.ran, killedText(o.killed), n, o.cwd)
		err = fmt.Errorf("%s: %s", ToolName, o.reason)
	case o.reason != "":
		fmt.Fprintf(&b, "[stopped: %s while running `%s`; killed %s. The shell did not come back, so it was killed with its whole process group; session %d starts a new shell in %s on the next call, and variables set earlier are gone.]",
			o.reason, o.ran, killedText(o.killed), n, o.cwd)
		err = fmt.Errorf("%s: %s; the command and its shell were killed", ToolName, o.reason)
	case o.exited:
		fmt.Fprintf(&b, "[%s while running `%s`. Session %d starts a new shell in %s on the next call; variables set earlier are gone.]", o.reason, o.ran, n, o.cwd)
		err = fmt.Errorf("%s: %s", ToolName, o.reason)
	case o.status != 0:
		fmt.Fprintf(&b, "[exit status %d]", o.status)
		err = fmt.Errorf("exit status %d", o.status)
	case text == "":
		b.WriteString("(no output; exit status 0)")
	}
	content := strings.ToValidUTF8(strings.TrimRight(b.String(), "\n"), "\uFFFD")
	return &exocortexv1.ToolResult{Content: content}, err
}

func killedText(ps []proc) string {
	if len(ps) == 0 {
		return "no other process (none was left running)"
	}
	return describe(ps)
}

// mergeProcs appends the processes of b not already in a.
func mergeProcs(a, b []proc) []proc {
	seen := make(map[int]bool, len(a))
	for _, p := range a {
		seen[p.pid] = true
	}
	for _, p := range b {
		if !seen[p.pid] {
			seen[p.pid] = true
			a = append(a, p)
		}
	}
	return a
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
