//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// openPTY opens a pseudo-terminal pair of rows×cols.
func openPTY(rows, cols uint16) (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlocking the pty: %w", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("naming the pty: %w", err)
	}
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		master.Close()
		return nil, nil, err
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

// screenLog collects what a process writes to its terminal and when a text
// first appeared in it.
type screenLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{}
}

// has reports whether text was written, styles ignored.
func (s *screenLog) has(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(ansi.Strip(s.buf.String()), text)
}

// waitFor returns the time at which text was on the terminal, polling every
// millisecond (the figure is rounded to it).
func (s *screenLog) waitFor(b *testing.B, text string, limit time.Duration) time.Time {
	end := time.Now().Add(limit)
	for !s.has(text) {
		if time.Now().After(end) {
			s.mu.Lock()
			out := s.buf.String()
			s.mu.Unlock()
			b.Fatalf("%q never appeared; the terminal got:\n%q", text, out)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Now()
}

// BenchmarkFirstPaint starts the real binary on a pseudo-terminal with the
// built-in plugins and n more in the plugin directory, and measures the time
// from exec to the first frame with the welcome card (first-paint) and to the
// card's final form, every plugin started (ready). The budget is 300 ms to
// first paint with 10 plugins; plugins start after it, behind the card.
// FIRSTPAINT_EXE names another build of exocortex to measure instead of
// this tree's (run the benchmark with and without it in turns to compare).
func BenchmarkFirstPaint(b *testing.B) {
	exe := os.Getenv("FIRSTPAINT_EXE")
	if exe == "" {
		exe = sdktest.BuildPlugin(b, "github.com/exocortex/exocortex/cmd/exocortex")
	}
	plugin := sdktest.BuildPlugin(b, "./testdata/tui/benchplugin")
	script, err := filepath.Abs(filepath.Join("testdata", "tui", "session.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{0, 10} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			home := b.TempDir()
			dir := filepath.Join(home, "plugins")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			last := ""
			for i := 1; i <= n; i++ {
				last = fmt.Sprintf("bench%02d", i)
				data, err := os.ReadFile(plugin)
				if err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, last), data, 0o755); err != nil {
					b.Fatal(err)
				}
			}
			var paints, readies, exits []time.Duration
			for b.Loop() {
				paint, ready, exit := startOnce(b, exe, home, script, last)
				paints = append(paints, paint)
				readies = append(readies, ready)
				exits = append(exits, exit)
			}
			b.ReportMetric(median(paints), "ms/first-paint")
			b.ReportMetric(median(readies), "ms/ready")
			b.ReportMetric(median(exits), "ms/exit")
		})
	}
}

func median(ds []time.Duration) float64 {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}

// startOnce runs one session until its welcome card is final, then ends it
// with SIGTERM; exit is how long that took.
func startOnce(b *testing.B, exe, home, script, lastPlugin string) (paint, ready, exit time.Duration) {
	master, slave, err := openPTY(40, 120)
	if err != nil {
		b.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	cmd := exec.Command(exe, "--model", "script:"+script)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	log := &screenLog{done: make(chan struct{})}
	go func() {
		defer close(log.done)
		chunk := make([]byte, 32<<10)
		for {
			n, err := master.Read(chunk)
			if n > 0 {
				log.mu.Lock()
				log.buf.Write(chunk[:n])
				log.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	slave.Close()
	paint = log.waitFor(b, "◆ Exocortex", 30*time.Second).Sub(start)
	// The final card is printed above the live area once everything is
	// known; the live card never says the memory is empty.
	ready = log.waitFor(b, "memory   empty (nothing saved yet)", 60*time.Second).Sub(start)
	if lastPlugin != "" && !log.has("✓ "+lastPlugin) {
		b.Fatalf("the card does not list %s", lastPlugin)
	}
	stopped := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			b.Fatalf("the session did not exit cleanly on SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		b.Fatal("the session did not exit within 20 s of SIGTERM")
	}
	return paint, ready, time.Since(stopped)
}
