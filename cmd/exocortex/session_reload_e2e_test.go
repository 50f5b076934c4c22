package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// envRunner writes the script tmux starts, as runner does, with extra
// environment lines (KEY=VALUE).
func envRunner(t *testing.T, exe, home, work string, env ...string) (script, pidFile string) {
	t.Helper()
	dir := t.TempDir()
	pidFile, script = filepath.Join(dir, "pid"), filepath.Join(dir, "run.sh")
	body := "#!/bin/sh\necho $$ > " + pidFile + "\ncd " + work + "\nexport EXOCORTEX_HOME=" + home + "\n"
	for _, e := range env {
		body += "export " + e + "\n"
	}
	body += "exec " + exe + ` "$@"` + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, pidFile
}

// responses is a script of plain answers, one per model call.
func responses(answers ...string) scripted.Script {
	s := scripted.Script{Source: "reload-e2e", Model: "e2e"}
	for _, a := range answers {
		b, _ := json.Marshal(map[string]any{"headline": "Answering", "tool_name": "response", "tool_args": map[string]any{"text": a}})
		s.Replies = append(s.Replies, scripted.Reply{Content: string(b)})
	}
	return s
}

// lastRequest is the text of every message of the model's last request.
func lastRequest(srv *scripted.Server) string {
	reqs := srv.Requests()
	if len(reqs) == 0 {
		return ""
	}
	var b strings.Builder
	for _, m := range reqs[len(reqs)-1].Messages {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}

var footerPlugins = regexp.MustCompile(`plugins (\d+)/(\d+)`)

// footerCount is the plugin count of the last status line on the screen.
func footerCount(screen string) string {
	all := footerPlugins.FindAllStringSubmatch(screen, -1)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1][2]
}

// TestHotReloadInTmux: a terminal session runs while `exocortex dev`
// rebuilds a scaffolded plugin. The next message uses the new version (its
// prompt block changes in the request the scripted model server receives);
// a plugin installed meanwhile is added and one deleted goes, each with a
// line in the transcript, an event in events.jsonl, and the footer's count
// following.
func TestHotReloadInTmux(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	checkout, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	home, work, src := t.TempDir(), t.TempDir(), t.TempDir()
	srv, err := scripted.NewServer(responses("ANSWER-ONE", "ANSWER-TWO", "ANSWER-THREE"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	tm := newTmux(t)
	env := append(os.Environ(), "EXOCORTEX_HOME="+home)
	for _, p := range []struct{ name, order string }{{"demo", "600"}, {"extra", "610"}} {
		cmd := exec.Command(exe, "plugins", "new", p.name, "--dir", filepath.Join(src, p.name), "--order", p.order, "--exocortex-src", checkout)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("plugins new %s: %v\n%s", p.name, err, out)
		}
	}

	// dev watches demo's source and installs it into home/plugins.
	ctx, cancel := context.WithCancel(context.Background())
	dev := exec.CommandContext(ctx, exe, "dev", filepath.Join(src, "demo"))
	dev.Env, dev.Dir = env, src
	dev.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dev.Cancel = func() error { return syscall.Kill(-dev.Process.Pid, syscall.SIGINT) }
	dev.WaitDelay = 20 * time.Second
	devOut := &syncBuf{}
	dev.Stdout, dev.Stderr = devOut, devOut
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = dev.Wait() })
	waitFor(t, "dev's first build", func() bool { return strings.Contains(devOut.String(), "watching the Go sources of demo") })
	if !strings.Contains(devOut.String(), "installed demo") {
		t.Fatalf("dev did not install demo:\n%s", devOut)
	}

	run, pidFile := envRunner(t, exe, home, work, "OLLAMA_HOST="+srv.URL())
	tm.run("new-session", "-d", "-s", "r", "-x", "120", "-y", "40", "sh "+run+" --model "+srv.Model())
	tm.track(pidFile)
	tm.waitFor("r", "✓ answered", "✓ demo", " records · ")
	before := tm.waitFooter("r", "")

	tm.typeLine("r", "first")
	tm.waitFor("r", "ANSWER-ONE")
	if req := lastRequest(srv); !strings.Contains(req, "demo ran 1 time(s) in this monologue.") {
		t.Fatalf("the first request lacks demo's block:\n%s", req)
	}

	// A change to demo's source: dev rebuilds it, the session swaps it in.
	mainGo := filepath.Join(src, "demo", "main.go")
	code, err := os.ReadFile(mainGo)
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Replace(code, []byte(`ran %d time(s) in this monologue.`), []byte(`v2 ran %d time(s) in this monologue.`), 1)
	if bytes.Equal(changed, code) {
		t.Fatal("the scaffold's block text was not found in main.go")
	}
	if err := os.WriteFile(mainGo, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "dev's second build", func() bool { return strings.Count(devOut.String(), "installed demo") >= 2 })
	tm.waitFor("r", "↻ plugin demo reloaded")
	tm.typeLine("r", "second")
	tm.waitFor("r", "ANSWER-TWO")
	// The first message's block stays in the history; the new block comes after it.
	if req := lastRequest(srv); !strings.Contains(req, "demo v2 ran 1 time(s)") || strings.LastIndex(req, "demo ran 1 time(s)") > strings.Index(req, "demo v2 ran") {
		t.Fatalf("the request after the rebuild does not carry the new version's block:\n%s", req)
	}

	// A new plugin, installed while the session runs.
	once := exec.Command(exe, "dev", "--once", filepath.Join(src, "extra"))
	once.Env = env
	if out, err := once.CombinedOutput(); err != nil {
		t.Fatalf("dev --once extra: %v\n%s", err, out)
	}
	tm.waitFor("r", "↻ plugin extra added")
	tm.waitFooter("r", fmt.Sprint(atoi(t, before)+1))
	tm.typeLine("r", "third")
	tm.waitFor("r", "ANSWER-THREE")
	if req := lastRequest(srv); !strings.Contains(req, "extra ran 1 time(s)") {
		t.Fatalf("the request after the addition lacks extra's block:\n%s", req)
	}

	// A deleted plugin goes.
	if err := os.Remove(filepath.Join(home, "plugins", "extra")); err != nil {
		t.Fatal(err)
	}
	tm.waitFor("r", "↻ plugin extra removed")
	tm.waitFooter("r", before)
	events, err := os.ReadFile(filepath.Join(home, "logs", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"reload","plugin":"demo"`, `"kind":"added","plugin":"extra"`, `"kind":"removed","plugin":"extra"`} {
		if !bytes.Contains(events, []byte(want)) {
			t.Errorf("events.jsonl lacks %s", want)
		}
	}
	tm.keys("r", "C-d")
	if status := tm.paneDead("r"); status != 0 {
		t.Fatalf("exit status %d after ctrl+d; the pane:\n%s", status, tm.screen("r"))
	}
}

// waitFooter polls until the status line counts want plugins (any count
// when want is "") and returns the count: the line in the transcript and the
// redrawn footer reach the terminal in two writes.
func (s *tmuxServer) waitFooter(pane, want string) string {
	s.t.Helper()
	end := time.Now().Add(45 * time.Second)
	for {
		scr := s.screen(pane)
		if got := footerCount(scr); got != "" && (want == "" || got == want) {
			return got
		}
		if time.Now().After(end) {
			s.t.Fatalf("the footer never counted %s plugins:\n%s", want, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}
