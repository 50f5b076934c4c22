package codeexec

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/exocortex/exocortex/sandbox"
)

// sysProcAttr starts the shell as the leader of a new session (and so of a new
// process group), and has the kernel kill it if the plugin dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// proc is a process that was killed.
type proc struct {
	pid int
	cmd string
}

// sessionMembers lists the live processes of session sid other than its leader,
// and, for a sandboxed shell (ns is its PID namespace), every process of that
// namespace, whatever session it moved to, other than the pids in keep; from
// /proc.
func sessionMembers(sid int, ns string, keep map[int]bool) []proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == sid || keep[pid] {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session ...; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 > len(stat) {
			continue
		}
		f := strings.Fields(string(stat[i+2:]))
		if len(f) < 4 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if s, _ := strconv.Atoi(f[3]); s != sid && (ns == "" || pidNS(pid) != ns) {
			continue
		}
		out = append(out, proc{pid: pid, cmd: cmdline(e.Name(), string(stat[bytes.IndexByte(stat, '(')+1:i]))})
	}
	return out
}

// cmdline is the process's command line, shortened, or its name.
func cmdline(pid, comm string) string {
	b, err := os.ReadFile("/proc/" + pid + "/cmdline")
	s := strings.TrimSpace(strings.ReplaceAll(string(bytes.TrimRight(b, "\x00")), "\x00", " "))
	if err != nil || s == "" {
		s = comm
	}
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// pidNS names the PID namespace of pid ("" when it is gone).
func pidNS(pid int) string {
	l, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	return l
}

// pinPIDNS names the PID namespace of pid and holds it open (the namespace
// outlives its processes while the returned file is open, so its id is not
// given to another namespace meanwhile). It returns "" and nil when pid is
// gone.
func pinPIDNS(pid int) (string, io.Closer) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		return "", nil
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return "", nil
	}
	// The form /proc/PID/ns/pid reads as (pidNS).
	return fmt.Sprintf("pid:[%d]", st.Ino), f
}

// childOf returns a child of pid, waiting up to limit for one to appear, or 0.
func childOf(pid int, limit time.Duration) int {
	end := time.Now().Add(limit)
	for {
		if cs := children(pid); len(cs) > 0 {
			return cs[0].pid
		}
		if time.Now().After(end) {
			return 0
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// child is a live child process and when it started (in clock ticks since boot).
type child struct {
	pid   int
	start uint64
}

// children lists the live (not zombie) children of pid from /proc.
func children(pid int) []child {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	parent := strconv.Itoa(pid)
	var out []child
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 > len(stat) {
			continue
		}
		// After the command name: state, ppid, ... starttime is the 20th field.
		f := strings.Fields(string(stat[i+2:]))
		if len(f) < 20 || f[1] != parent || f[0] == "Z" {
			continue
		}
		start, _ := strconv.ParseUint(f[19], 10, 64)
		out = append(out, child{pid: c, start: start})
	}
	return out
}

// eldestChild returns the earliest-started live child of pid (fallback when it
// has none). Under a reaper the shell is the reaper's first child; processes
// the reaper adopted later (setsid or double-forked orphans) started after it.
// Asked at kill time, so a shell recorded wrongly at start is still spared.
func eldestChild(pid, fallback int) int {
	best := child{pid: fallback}
	for i, c := range children(pid) {
		if i == 0 || c.start < best.start || (c.start == best.start && c.pid < best.pid) {
			best = c
		}
	}
	return best.pid
}

// killMembers kills with SIGKILL every process of the shell's session (and of
// its sandbox) except the shell, and returns them.
func killMembers(sid int, ns string, keep map[int]bool) []proc {
	ps := sessionMembers(sid, ns, keep)
	for _, p := range ps {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	return ps
}

// killDescendants kills with SIGKILL every process beneath the reaper root
// except the shell (and, the shell being their parent, not its descendants
// either: they are killed as processes beneath root too), and returns them.
// Beneath a child subreaper, that includes what left the shell's session.
func killDescendants(root, shell int) []proc {
	var out []proc
	for _, pid := range sandbox.Descendants(root) {
		if pid == shell {
			continue
		}
		s := strconv.Itoa(pid)
		comm, _ := os.ReadFile("/proc/" + s + "/comm")
		out = append(out, proc{pid: pid, cmd: cmdline(s, strings.TrimSpace(string(comm)))})
	}
	for _, p := range out {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	return out
}

// killGroup kills the shell's whole process group.
func killGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// watcherScript waits for end of file on its standard input, which happens when
// the plugin closes the pipe or dies (however it dies), then kills every process
// of the shell's session ($1) and its process group.
const watcherScript = `read -r _; pkill -KILL -s "$1" 2>/dev/null; kill -KILL -- -"$1" 2>/dev/null; exit 0`

// startWatcher starts the session's watcher: a small shell in a session of its
// own (so neither the host's kill of the plugin's group nor the time-limit sweep
// of the shell's session reaches it) reading a pipe only the plugin writes. The
// shell's Pdeathsig covers the shell alone; the watcher covers the jobs it left
// running in the background. Closing the returned pipe triggers it.
func startWatcher(sid int) (*os.File, *exec.Cmd, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", watcherScript, "exocortex-session-watch", strconv.Itoa(sid))
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, nil, fmt.Errorf("starting the session watcher: %w", err)
	}
	r.Close()
	go func() { _ = cmd.Wait() }()
	return w, cmd, nil
}

// awaitDeath waits, at most limit, until each of ps has died (gone, or a zombie
// its parent has yet to reap), so that the shell has had its SIGCHLD before the
// next command and reports the jobs it lost there.
func awaitDeath(ps []proc, limit time.Duration) {
	end := time.Now().Add(limit)
	for _, p := range ps {
		for time.Now().Before(end) {
			stat, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/stat")
			if err != nil {
				break
			}
			i := bytes.LastIndexByte(stat, ')')
			if i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}
