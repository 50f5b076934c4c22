package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// tmuxServer is a tmux server of the test's own (its socket in a temp
// directory), so the test never touches the operator's tmux.
type tmuxServer struct {
	t    *testing.T
	sock string
	conf string
	pids []int
}

func newTmux(t *testing.T) *tmuxServer {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed, so the terminal session's end-to-end test cannot run (apt-get install -y tmux)")
	}
	dir := t.TempDir()
	s := &tmuxServer{t: t, sock: filepath.Join(dir, "tmux.sock"), conf: filepath.Join(dir, "tmux.conf")}
	// remain-on-exit keeps a pane whose process died, to read it and its status.
	if err := os.WriteFile(s.conf, []byte("set -g remain-on-exit on\nset -g history-limit 10000\nset -g status off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-S", s.sock, "kill-server").Run()
		// The session gets SIGHUP; let it close its plugins before the
		// directories are removed.
		for _, pid := range s.pids {
			for end := time.Now().Add(15 * time.Second); time.Now().Before(end) && syscall.Kill(pid, 0) == nil; {
				time.Sleep(50 * time.Millisecond)
			}
		}
	})
	return s
}

// track remembers a process to wait for at cleanup.
func (s *tmuxServer) track(pidFile string) int {
	s.t.Helper()
	end := time.Now().Add(45 * time.Second)
	for {
		b, err := os.ReadFile(pidFile)
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				s.pids = append(s.pids, pid)
				return pid
			}
		}
		if time.Now().After(end) {
			s.t.Fatalf("no pid in %s", pidFile)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock, "-f", s.conf}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is the pane's visible screen and its scrollback.
func (s *tmuxServer) screen(pane string) string {
	return s.run("capture-pane", "-p", "-J", "-t", pane, "-S", "-3000")
}

// waitFor polls the pane until every want is on it. The deadline is generous
// (a loaded 2-core machine); the poll itself asserts nothing by time.
func (s *tmuxServer) waitFor(pane string, wants ...string) string {
	s.t.Helper()
	end := time.Now().Add(45 * time.Second)
	for {
		scr := s.screen(pane)
		missing := ""
		for _, w := range wants {
			if !strings.Contains(scr, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return scr
		}
		if time.Now().After(end) {
			s.t.Fatalf("the pane never showed %q; it shows:\n%s", missing, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitInput polls until the input line (the line above the rule under the
// input) is want.
// waitAfter waits until want shows on the pane after the last place marker
// shows, so that text printed earlier (a recall block, an earlier answer)
// does not satisfy it; it returns the screen from that marker on.
func (s *tmuxServer) waitAfter(pane, marker, want string) string {
	s.t.Helper()
	end := time.Now().Add(45 * time.Second)
	for {
		scr := s.screen(pane)
		if at := strings.LastIndex(scr, marker); at >= 0 && strings.Contains(scr[at+len(marker):], want) {
			return scr[at:]
		}
		if time.Now().After(end) {
			s.t.Fatalf("the pane never showed %q after %q; it shows:\n%s", want, marker, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *tmuxServer) waitInput(pane, want string) {
	s.t.Helper()
	end := time.Now().Add(45 * time.Second)
	for {
		scr := s.screen(pane)
		got := inputLine(scr)
		if got == want {
			return
		}
		if time.Now().After(end) {
			s.t.Fatalf("input line %q, want %q; the pane:\n%s", got, want, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// inputLine finds the input: the line between the last two rules.
func inputLine(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	last := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "────") {
			last = i
			break
		}
	}
	if last < 1 {
		return ""
	}
	return strings.TrimRight(lines[last-1], " ")
}

func (s *tmuxServer) typeLine(pane, text string) {
	s.run("send-keys", "-t", pane, "-l", text)
	s.run("send-keys", "-t", pane, "Enter")
}

func (s *tmuxServer) keys(pane string, keys ...string) {
	s.run(append([]string{"send-keys", "-t", pane}, keys...)...)
}

// paneDead waits for the pane's process to end and returns its exit status.
func (s *tmuxServer) paneDead(pane string) int {
	s.t.Helper()
	end := time.Now().Add(45 * time.Second)
	for {
		out := strings.TrimSpace(s.run("list-panes", "-t", pane, "-F", "#{pane_dead} #{pane_dead_status}"))
		if dead, status, _ := strings.Cut(out, " "); dead == "1" {
			n, _ := strconv.Atoi(status)
			return n
		}
		if time.Now().After(end) {
			s.t.Fatalf("the process in pane %s did not end; the pane:\n%s", pane, s.screen(pane))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSessionInTmux drives the real binary in a real terminal (tmux) against
// the scripted Ollama-protocol server: the welcome card, a streamed answer,
// /help, history recall with Up, Ctrl+C during a long stream, and the session
// resumed with -c after its process was killed with SIGKILL.
func TestSessionInTmux(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := t.TempDir(), t.TempDir()
	// After the directories, so its cleanup (ending the processes) runs first.
	tm := newTmux(t)
	scripts, err := filepath.Abs(filepath.Join("testdata", "tui"))
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	runner := filepath.Join(t.TempDir(), "run.sh")
	script := "#!/bin/sh\necho $$ > " + pidFile + "\ncd " + work + "\nexport EXOCORTEX_HOME=" + home + "\nexec " + exe + ` "$@"` + "\n"
	if err := os.WriteFile(runner, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	started := time.Now()
	tm.run("new-session", "-d", "-s", "one", "-x", "110", "-y", "40", "sh "+runner+" --model script:"+filepath.Join(scripts, "session.yaml"))
	pid := tm.track(pidFile)
	tm.waitFor("one", "◆ Exocortex", "new session")
	t.Logf("welcome card on the screen %s after tmux started the process", time.Since(started).Round(time.Millisecond))
	tm.waitFor("one", "model    e2e", "✓ answered", "plugins  ✓", "memory   empty", "ctrl+d quit", "plugins ")

	// A streamed answer, rendered as Markdown with its code block.
	tm.typeLine("one", "say hello")
	tm.waitFor("one", "› say hello", "Hello from the scripted model.", `fmt.Println("e2e")`, "That was the streamed-answer check.", "tok/s")

	// /help.
	tm.typeLine("one", "/help")
	tm.waitFor("one", "/wiring", "ctrl+r", "/help all")
	tm.typeLine("one", "/help all")
	tm.waitFor("one", "search the history", "/export json FILE")

	// History recall with Up: /help all, /help, then say hello.
	tm.keys("one", "Up")
	tm.waitInput("one", "› /help all")
	tm.keys("one", "Up")
	tm.waitInput("one", "› /help")
	tm.keys("one", "Up")
	tm.waitInput("one", "› say hello")
	tm.keys("one", "C-c") // clears the input
	tm.waitInput("one", "› Ask anything · / commands · @file · !shell · Enter on an empty line: reflect")

	// Ctrl+C in the middle of a long stream stops it; the session goes on.
	tm.typeLine("one", "write a lot")
	tm.waitFor("one", "LONGSTREAM begins")
	tm.keys("one", "C-c")
	scr := tm.waitFor("one", "stopped (ctrl+c)")
	if strings.Contains(scr, "LONGSTREAM ends") {
		t.Fatalf("the stream went on after ctrl+c:\n%s", scr)
	}
	tm.typeLine("one", "still there?")
	tm.waitFor("one", "Still here after the stop.")

	// Kill the process outright: what was shown is already saved.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	tm.paneDead("one")
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions after the kill: %v", files)
	}
	saved, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"say hello", "write a lot", "still there?", "Still here after the stop."} {
		if !bytes.Contains(saved, []byte(want)) {
			t.Fatalf("the session file lacks %q after the kill", want)
		}
	}

	// -c continues it: the conversation is shown again, the input history is
	// there, and the next prompt reaches the model.
	os.Remove(pidFile)
	tm.run("new-session", "-d", "-s", "two", "-x", "110", "-y", "40", "sh "+runner+" -c --model script:"+filepath.Join(scripts, "resumed.yaml"))
	tm.track(pidFile)
	tm.waitFor("two", "resumed session", "› say hello", "Hello from the scripted model.", "› still there?", "Still here after the stop.")
	tm.keys("two", "Up")
	tm.waitInput("two", "› still there?")
	tm.keys("two", "C-c")
	tm.typeLine("two", "after the kill")
	tm.waitFor("two", "Resumed and answering.")
	tm.keys("two", "C-d")
	if status := tm.paneDead("two"); status != 0 {
		t.Fatalf("exit status %d after ctrl+d; the pane:\n%s", status, tm.screen("two"))
	}
	saved, err = os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"after the kill", "Resumed and answering."} {
		if !bytes.Contains(saved, []byte(want)) {
			t.Fatalf("the resumed session's file lacks %q", want)
		}
	}
}

// TestSessionWithoutTerminal pipes prompts into the binary: with no terminal
// it reads them line by line, answers on stdout, and reports on stderr.
func TestSessionWithoutTerminal(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := t.TempDir()
	script, err := filepath.Abs(filepath.Join("testdata", "tui", "session.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--model", "script:"+script, "--session", "piped")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	cmd.Stdin = strings.NewReader("say hello\n/sessions\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Hello from the **scripted** model.") || !strings.Contains(stdout.String(), "• piped") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "session piped") || strings.Contains(stdout.String(), "\x1b[") {
		t.Fatalf("stderr:\n%s\nstdout has escape codes: %q", stderr.String(), stdout.String())
	}
	if _, err := os.Stat(filepath.Join(home, "sessions", "piped.jsonl")); err != nil {
		t.Fatal(err)
	}
}

// e2eLongAnswer is an answer of n numbered paragraphs with a code block and
// a table, ending in a line that must not be lost.
func e2eLongAnswer(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "PARA%03d the quick brown fox jumps over the lazy dog, paragraph %d.\n\n", i, i)
		if i == n/3 {
			b.WriteString("```go\nfunc main() {\n\tfmt.Println(\"CODELINE\")\n}\n```\n\n")
		}
		if i == 2*n/3 {
			b.WriteString("| col | value |\n|---|---|\n| TABROW1 | x |\n| TABROW2 | y |\n\n")
		}
	}
	b.WriteString("LASTLINE the conclusion.")
	return b.String()
}

// writeScript writes a scripted model (JSON is YAML) whose replies are the
// given tool calls, each streamed in chunks of chunk bytes delay apart.
func writeScript(t *testing.T, chunk int, delay time.Duration, replies ...map[string]any) string {
	t.Helper()
	var rs []map[string]any
	for _, r := range replies {
		content, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, map[string]any{"content": string(content), "chunk_size": chunk, "delay": delay.String()})
	}
	b, err := json.Marshal(map[string]any{"model": "e2e", "replies": rs})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runner writes the script tmux starts: it records its pid, and runs the
// binary in work with EXOCORTEX_HOME=home.
func runner(t *testing.T, exe, home, work string) (script, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	pidFile, script = filepath.Join(dir, "pid"), filepath.Join(dir, "run.sh")
	body := "#!/bin/sh\necho $$ > " + pidFile + "\ncd " + work + "\nexport EXOCORTEX_HOME=" + home + "\nexec " + exe + ` "$@"` + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, pidFile
}

var spinnerFrames = []string{"⣾", "⣽", "⣻", "⢿", "⡿", "⣟", "⣯", "⣷", "Writing…", "Thinking…"}

// TestLongAnswerInTmux: an answer three screens long, at 80 and 120
// columns and with a resize in the middle of it, leaves every line once in
// the terminal's scrollback, in order, its last line too, and no spinner.
func TestLongAnswerInTmux(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	const paras = 45 // three screens of 30 rows
	text := e2eLongAnswer(paras)
	var names []string
	for i := 1; i <= paras; i++ {
		names = append(names, fmt.Sprintf("PARA%03d", i))
	}
	names = append(names, "CODELINE", "TABROW1", "TABROW2", "LASTLINE")
	var want []string
	for _, l := range strings.Split(text, "\n") {
		for _, n := range names {
			if strings.Contains(l, n) {
				want = append(want, n)
			}
		}
	}
	tests := []struct {
		name          string
		width, resize int
	}{
		{"80", 80, 0},
		{"120", 120, 0},
		{"120-to-80-mid-answer", 120, 80},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home, work := t.TempDir(), t.TempDir()
			tm := newTmux(t)
			script := writeScript(t, 16, 8*time.Millisecond, map[string]any{
				"headline": "Writing at length", "tool_name": "response", "tool_args": map[string]any{"text": text},
			})
			run, pidFile := runner(t, exe, home, work)
			tm.run("new-session", "-d", "-s", "l", "-x", strconv.Itoa(tc.width), "-y", "30", "sh "+run+" --model script:"+script)
			// E2E_RAW=DIR keeps each pane's raw output (what the program
			// wrote to its terminal) in DIR, to replay a failure.
			if d := os.Getenv("E2E_RAW"); d != "" {
				tm.run("pipe-pane", "-t", "l", "-o", "cat > "+filepath.Join(d, strings.ReplaceAll(t.Name(), "/", "_")+"-"+strconv.FormatInt(time.Now().UnixNano(), 10)+".raw"))
			}
			tm.track(pidFile)
			tm.waitFor("l", "✓ answered", "memory ")
			tm.typeLine("l", "write at length")
			if tc.resize > 0 {
				tm.waitFor("l", "PARA015")
				tm.run("resize-window", "-t", "l", "-x", strconv.Itoa(tc.resize), "-y", "30")
			}
			tm.waitFor("l", "LASTLINE", "tok/s")
			// The footer is printed after the answer: everything is in.
			time.Sleep(300 * time.Millisecond)
			scr := tm.screen("l")
			var got []string
			for _, l := range strings.Split(scr, "\n") {
				for _, n := range names {
					if strings.Contains(l, n) {
						got = append(got, n)
					}
				}
				for _, s := range spinnerFrames {
					if strings.Contains(l, s) && os.Getenv("E2E_DUMP") != "" {
						t.Logf("pane:\n%s", scr)
					}
					if strings.Contains(l, s) {
						t.Errorf("a spinner line was left behind: %q", l)
					}
				}
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("the scrollback's markers:\n%v\nwant each once, in order:\n%v\nthe pane:\n%s", got, want, scr)
			}
			if n := strings.Count(scr, "Writing at length"); n != 1 {
				t.Errorf("the headline is in the scrollback %d times", n)
			}
			if tc.resize > 0 {
				// The rules are drawn at the new width, once each.
				rules := 0
				for _, l := range strings.Split(scr, "\n") {
					if strings.HasPrefix(l, "────") {
						rules++
						if w := len([]rune(strings.TrimRight(l, " "))); w != tc.resize {
							t.Errorf("a rule is %d wide after the resize to %d", w, tc.resize)
						}
					}
				}
				if rules != 2 {
					t.Errorf("%d rules on the screen, want the input's two:\n%s", rules, scr)
				}
			}
		})
	}
}

// TestKilledMidStreamResumesAsShown: the process is killed with SIGKILL in
// the middle of an answer that followed a tool call; -c shows the tool call
// (expandable with /expand) and the part of the answer that had streamed.
func TestKilledMidStreamResumesAsShown(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := t.TempDir(), t.TempDir()
	tm := newTmux(t)
	partial := "FIRSTPARA of the answer, shown before the kill.\n\nSECONDPARA, shown too.\n\n" + strings.Repeat("slow words ", 400)
	script := writeScript(t, 4, 40*time.Millisecond,
		map[string]any{"headline": "Looking it up", "tool_name": "memory_load", "tool_args": map[string]any{"query": "kill test"}},
		map[string]any{"headline": "Answering", "tool_name": "response", "tool_args": map[string]any{"text": partial}},
	)
	run, pidFile := runner(t, exe, home, work)
	tm.run("new-session", "-d", "-s", "k", "-x", "100", "-y", "30", "sh "+run+" --model script:"+script)
	pid := tm.track(pidFile)
	tm.waitFor("k", "✓ answered", "memory ")
	tm.typeLine("k", "look it up")
	tm.waitFor("k", "⚙ memory_load", "SECONDPARA")
	// The answer streams on for half a minute; let what is on the screen
	// settle (it is recorded five times a second).
	time.Sleep(time.Second)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	tm.paneDead("k")
	if os.Getenv("E2E_DUMP") != "" {
		shown, _ := filepath.Glob(filepath.Join(home, "sessions", "*"))
		for _, f := range shown {
			b, _ := os.ReadFile(f)
			t.Logf("%s:\n%.600s", f, b)
		}
	}

	os.Remove(pidFile)
	resumed := writeScript(t, 8, time.Millisecond, map[string]any{"tool_name": "response", "tool_args": map[string]any{"text": "Resumed."}})
	tm.run("new-session", "-d", "-s", "c", "-x", "100", "-y", "30", "sh "+run+" -c --model script:"+resumed)
	tm.track(pidFile)
	scr := tm.waitFor("c", "resumed session", "› look it up", "● Looking it up", "⚙ memory_load", "query=kill test",
		"FIRSTPARA", "SECONDPARA", "before the answer was complete")
	if strings.Contains(scr, "(no answer)") || strings.Contains(scr, "(1 tool call)") {
		t.Fatalf("the resumed session lost what was shown:\n%s", scr)
	}
	tm.typeLine("c", "/expand 1")
	tm.waitFor("c", "tool call 1 · memory_load", `"query": "kill test"`, "result")
	tm.keys("c", "C-d")
	scr = tm.waitFor("c", "bye · session")
	if !strings.Contains(scr, "exocortex --resume ") {
		t.Fatalf("the goodbye line does not say how to resume:\n%s", scr)
	}
}

// TestReasoningAndRetryInTmux drives the real binary in a real terminal
// against the scripted OpenAI-compatible server: a 503 is retried and the
// retry shown, the model's reasoning (reasoning_content, then a <think>
// block in the text) is one folded line each, and ctrl+o and /expand open it.
func TestReasoningAndRetryInTmux(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := t.TempDir(), t.TempDir()
	tm := newTmux(t)
	script, err := filepath.Abs(filepath.Join("testdata", "tui", "thinking.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	runner := filepath.Join(t.TempDir(), "run.sh")
	sh := "#!/bin/sh\necho $$ > " + pidFile + "\ncd " + work + "\nexport EXOCORTEX_HOME=" + home + "\nexport " + config.EnvProvider + "=openai\nexec " + exe + ` "$@"` + "\n"
	if err := os.WriteFile(runner, []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	tm.run("new-session", "-d", "-s", "think", "-x", "110", "-y", "40", "sh "+runner+" --model script:"+script)
	tm.track(pidFile)
	tm.waitFor("think", "◆ Exocortex", "model    thinker", "✓ answered", "ctrl+d quit")

	tm.typeLine("think", "first")
	tm.waitFor("think", "↻ retrying in ≤0.5s (HTTP 503) 1/3", "✻ Thought for", "(ctrl+o or /expand 1)", "First answer after thinking.")
	tm.typeLine("think", "second")
	scr := tm.waitFor("think", "(ctrl+o or /expand 2)", "Second answer, think block folded.")
	if strings.Contains(scr, "SECRET") || strings.Contains(scr, "<think>") {
		t.Fatalf("the reasoning is shown unfolded:\n%s", scr)
	}
	tm.keys("think", "C-o")
	tm.waitFor("think", "thought 2 ·", "SECRETTWO this one reasons in the text.")
	tm.typeLine("think", "/expand 1")
	tm.waitFor("think", "thought 1 ·", "SECRETPLAN the operator wants the first answer; keep it short.")
	tm.keys("think", "C-d")
	if status := tm.paneDead("think"); status != 0 {
		t.Fatalf("exit status %d after ctrl+d; the pane:\n%s", status, tm.screen("think"))
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*.jsonl"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err != nil || bytes.Contains(b, []byte("SECRET")) {
			t.Errorf("the session file %s keeps the reasoning (%v)", f, err)
		}
	}
}
