package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reaperArg makes the executable the reaper (see Reap).
const reaperArg = LauncherArg + "-reap"

// Reap rewrites cmd, built as usual and not yet started, so that it runs under
// a reaper: the running executable (or exe) re-executed as a child subreaper
// (PR_SET_CHILD_SUBREAPER), which starts the command as its child. Every
// process the command starts stays beneath the reaper, even one that left the
// command's session and process group (setsid, nohup, a double fork): an
// orphan is handed to the reaper, not to init. When the command ends, when the
// reaper gets SIGTERM, when the caller dies (Pdeathsig) or when the caller
// closes the returned lifeline, the reaper kills every process beneath it and
// exits. This is what the sandbox's PID namespace does, for the commands that
// run without the sandbox (turned off, or not available on this machine).
//
// The command's path, arguments, environment, directory, standard streams and
// session or process group (SysProcAttr) are kept; the reaper's Pdeathsig is
// SIGTERM, so that it cleans up before it goes. The caller keeps the returned
// file open while the command runs and closes it to end everything.
func Reap(cmd *exec.Cmd, exe string) (io.Closer, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if cmd.Process != nil {
		return nil, fmt.Errorf("reaper: %s is already started", cmd.Path)
	}
	var err error
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("reaper: finding the launcher (this executable): %w", err)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("reaper: creating its lifeline: %w", err)
	}
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	prog := cmd.Path
	argv := cmd.Args
	if len(argv) == 0 {
		argv = []string{prog}
	}
	cmd.Path = exe
	cmd.Args = append([]string{exe, reaperArg, strconv.Itoa(fd), prog, "--"}, argv...)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	return &lifeline{File: w, r: r}, nil
}

// reap is the reaper's body: args are reaperArg, the lifeline's descriptor, the
// program, "--" and its argv. It returns the command's status.
func reap(args []string) (int, error) {
	if len(args) < 4 || args[3] != "--" {
		return 0, fmt.Errorf("usage: %s FD PROGRAM -- ARGV... (started by Exocortex, not by hand)", reaperArg)
	}
	fd, err := strconv.Atoi(args[1])
	if err != nil || fd < 3 {
		return 0, fmt.Errorf("the lifeline descriptor %q: want a number from 3", args[1])
	}
	prog, argv := args[2], args[4:]
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("becoming a child subreaper: %w", err)
	}
	syscall.CloseOnExec(fd)
	life := os.NewFile(uintptr(fd), "lifeline")
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	if os.Getppid() == 1 {
		return 0, errors.New("the caller died before the command started")
	}
	cmd := &exec.Cmd{Path: prog, Args: argv, Env: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		// The command dies with the reaper, whatever kills the reaper.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", prog, err)
	}
	end := make(chan int, 3)
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM {
				end <- 128 + int(syscall.SIGTERM)
				return
			}
			_ = cmd.Process.Signal(s)
		}
	}()
	go func() {
		_, _ = io.Copy(io.Discard, life)
		end <- 128 + int(syscall.SIGKILL)
	}()
	go func() {
		code, err := waitFor(cmd.Process.Pid)
		if err != nil {
			code = 128 + int(syscall.SIGKILL)
		}
		end <- code
	}()
	code := <-end
	KillDescendants(os.Getpid())
	return code, nil
}

// lifeline is the caller's end of the reaper's pipe; Close also closes the
// read end the caller still holds once the reaper has started.
type lifeline struct {
	*os.File
	r *os.File
}

// Close ends the lifeline: the reaper kills everything beneath it and exits.
func (l *lifeline) Close() error {
	_ = l.r.Close()
	return l.File.Close()
}

// Descendants lists the live processes beneath pid (its children, theirs, and
// so on; zombies left out), from /proc.
func Descendants(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 > len(stat) {
			continue
		}
		f := strings.Fields(string(stat[i+2:]))
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	var out []int
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		queue = append(queue, children[p]...)
	}
	return out
}

// KillDescendants kills with SIGKILL every process beneath pid, sweeping again
// until none is left (a process forking while it is killed leaves a child,
// which a subreaper then holds), for at most two seconds.
func KillDescendants(pid int) {
	end := time.Now().Add(2 * time.Second)
	for time.Now().Before(end) {
		ds := Descendants(pid)
		if len(ds) == 0 {
			return
		}
		for _, p := range ds {
			_ = unix.Kill(p, unix.SIGKILL)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
