package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// liveScript writes a scripted model for one session: replies in order.
func liveScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMemoryServiceLiveSession: a live `run -p` session (scripted model, its
// first reply streamed slowly so the session stays open) owns the home's
// memory; while it runs, other processes — memory add, memory search, memory
// stats, sleep --dry-run and a second run -p session — answer through it,
// none refused and none kept waiting; the second session finds the CLI's
// write, the live session then finds the CLI's and the second session's
// writes, and its own write is found afterwards; every write is in the store
// once and memory replay --verify agrees.
func TestMemoryServiceLiveSession(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	home := serviceHome(t)
	project := t.TempDir()
	exo := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
		return cmd
	}
	// run runs a client process; it must answer within a few seconds.
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		cmd := exo(args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("%v took %v beside the live session", args, d)
		}
		return out.String()
	}
	type stats struct {
		Records  int `json:"records"`
		OwnerPID int `json:"owner_pid"`
	}
	readStats := func() stats {
		t.Helper()
		var st stats
		if err := json.Unmarshal([]byte(run("memory", "stats", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}

	// An existing store, written with no owner running.
	seed := strings.TrimSpace(run("memory", "add", "--embedder", "none", "the old quay was rebuilt in granite"))

	// The live session: its first reply streams for about 30 s, then it
	// recalls the CLI's and the second session's writes and saves its own.
	hold := `{"thoughts": ["` + strings.Repeat("holding the session open ", 8) + `"], "headline": "Recalling", "tool_name": "memory_load", "tool_args": {"query": "lighthouse keeper"}}`
	live := liveScript(t, project, "live.yaml", fmt.Sprintf(`model: live
replies:
  - content: '%s'
    chunk_size: 1
    delay: 150ms
  - content: '{"thoughts": ["found the CLI write"], "tool_name": "memory_load", "tool_args": {"query": "tide gauge harbour"}}'
  - tool_calls:
      - name: memory_save
        arguments: {key: "beacon", value: "the live session saw the beacon relit"}
  - content: '{"thoughts": ["done"], "tool_name": "response", "tool_args": {"text": "LIVE-DONE"}}'
`, hold))
	second := liveScript(t, project, "second.yaml", `model: second
replies:
  - tool_calls:
      - name: memory_load
        arguments: {query: "lighthouse keeper"}
  - tool_calls:
      - name: memory_save
        arguments: {key: "tide_gauge", value: "the tide gauge at the harbour mouth reads high"}
  - content: '{"thoughts": ["done"], "tool_name": "response", "tool_args": {"text": "SECOND-DONE"}}'
`)

	session := exo("run", "-p", "recall the harbour notes", "--json", "--model", "script:"+live)
	var sessOut, sessErr bytes.Buffer
	session.Stdout, session.Stderr = &sessOut, &sessErr
	sessStart := time.Now()
	if err := session.Start(); err != nil {
		t.Fatal(err)
	}
	sessDone := make(chan error, 1)
	go func() { sessDone <- session.Wait() }()
	t.Cleanup(func() {
		session.Process.Kill()
		<-sessDone
	})

	// The session becomes the owner (it warms memory at start-up).
	var owner stats
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		owner = readStats()
		if owner.OwnerPID == session.Process.Pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the live session (pid %d) did not become the owner: stats %+v\n%s", session.Process.Pid, owner, sessErr.String())
		}
	}
	if owner.Records != 1 {
		t.Fatalf("the live session serves %d records; want the seed", owner.Records)
	}

	// Other processes, while the session streams.
	added := strings.TrimSpace(run("memory", "add", "the lighthouse keeper logs every passing ship"))
	var res struct {
		Hits []struct {
			Record struct{ ID string } `json:"record"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(run("memory", "search", "--json", "granite quay")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Record.ID != seed {
		t.Fatalf("memory search beside the session: %+v; want %s first", res.Hits, seed)
	}
	var plan struct {
		DryRun bool `json:"dry_run"`
	}
	if err := json.Unmarshal([]byte(run("sleep", "--dry-run", "--json")), &plan); err != nil || !plan.DryRun {
		t.Fatalf("sleep --dry-run beside the session: %+v %v", plan, err)
	}
	out := run("run", "-p", "note the tide", "--json", "--model", "script:"+second)
	if !strings.Contains(out, "SECOND-DONE") {
		t.Fatalf("the second session did not finish:\n%s", out)
	}
	checkTools(t, "the second session", out, "the lighthouse keeper logs every passing ship")
	st := readStats()
	if st.OwnerPID != session.Process.Pid || st.Records < 3 {
		t.Fatalf("stats after the others' writes: %+v; want owner %d and at least 3 records", st, session.Process.Pid)
	}
	terminalClient(t, exe, home, project, st.Records)
	if err := json.Unmarshal([]byte(run("memory", "search", "--json", "fog pier")), &res); err != nil || len(res.Hits) == 0 {
		t.Fatalf("the terminal's /memory add is not found from another process: %+v %v", res.Hits, err)
	}
	t.Logf("the clients were done %v after the session started", time.Since(sessStart).Round(time.Millisecond))
	select {
	case err := <-sessDone:
		sessDone <- err
		t.Fatalf("the live session ended before the others were done (make its first reply slower): %v\n%s\n%s", err, sessOut.String(), sessErr.String())
	default:
	}

	// The live session recalls both writes and saves its own.
	select {
	case err := <-sessDone:
		sessDone <- err
		if err != nil || !strings.Contains(sessOut.String(), "LIVE-DONE") {
			t.Fatalf("the live session: %v\n%s\n%s", err, sessOut.String(), sessErr.String())
		}
	case <-ctx.Done():
		t.Fatal("the live session did not end")
	}
	checkTools(t, "the live session", sessOut.String(), "the lighthouse keeper logs every passing ship", "the tide gauge at the harbour mouth reads high")
	if err := json.Unmarshal([]byte(run("memory", "search", "--json", "beacon relit")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 {
		t.Fatal("the live session's write is not found from another process")
	}

	// Every write once; the replay agrees.
	ids, texts := exportCounts(t, run("memory", "export"))
	for _, id := range []string{seed, added} {
		if ids[id] != 1 {
			t.Errorf("record %s: %d times in the store; want once", id, ids[id])
		}
	}
	for _, text := range []string{"the terminal noted fog at the pier", "the tide gauge at the harbour mouth reads high", "the live session saw the beacon relit"} {
		if texts[text] != 1 {
			t.Errorf("%q: %d times in the store; want once (export: %v)", text, texts[text], texts)
		}
	}
	var rep struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(run("memory", "replay", "--verify", "--json")), &rep); err != nil || !rep.OK {
		t.Fatalf("replay --verify: %+v %v", rep, err)
	}
}

// exportCounts counts the records of a `memory export` by id and by text.
func exportCounts(t *testing.T, export string) (ids, texts map[string]int) {
	t.Helper()
	ids, texts = map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(export))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		ids[r.ID]++
		texts[r.Text]++
	}
	return ids, texts
}

// checkTools fails when a tool call in a run --json output failed, or when
// the memory_load results do not hold each of want.
func checkTools(t *testing.T, who, out string, want ...string) {
	t.Helper()
	var loaded strings.Builder
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l struct {
			Type   string `json:"type"`
			Tool   string `json:"tool"`
			Result string `json:"result"`
			Error  string `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "tool_result" {
			continue
		}
		if l.Error != "" {
			t.Errorf("%s: %s failed: %s", who, l.Tool, l.Error)
		}
		if l.Tool == "memory_load" {
			loaded.WriteString(l.Result + "\n")
		}
	}
	for _, w := range want {
		if !strings.Contains(loaded.String(), w) {
			t.Errorf("%s did not recall %q; its memory_load results:\n%s", who, w, loaded.String())
		}
	}
}

// terminalClient opens the terminal session (in tmux) on home beside the
// live session: its /memory stats counts the records the others wrote
// (records before, then one more after its own /memory add).
func terminalClient(t *testing.T, exe, home, work string, records int) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Log("tmux is not installed: the terminal's /memory is not checked (apt-get install -y tmux)")
		return
	}
	tm := newTmux(t)
	script := liveScript(t, t.TempDir(), "terminal.yaml", "model: terminal\nreplies:\n  - content: '{\"thoughts\": [\"-\"], \"tool_name\": \"response\", \"tool_args\": {\"text\": \"-\"}}'\n")
	sh, pidFile := runner(t, exe, home, work)
	tm.run("new-session", "-d", "-s", "term", "-x", "110", "-y", "40", "sh "+sh+" --model script:"+script)
	tm.track(pidFile)
	tm.waitFor("term", "◆ Exocortex", "ctrl+d quit")
	tm.typeLine("term", "/memory stats")
	tm.waitFor("term", fmt.Sprintf("records   %d", records))
	tm.typeLine("term", "/memory add the terminal noted fog at the pier")
	tm.waitFor("term", "✓ saved memory")
	tm.typeLine("term", "/memory stats")
	tm.waitFor("term", fmt.Sprintf("records   %d", records+1))
	tm.typeLine("term", "/quit")
	if code := tm.paneDead("term"); code != 0 {
		t.Fatalf("the terminal session exited %d:\n%s", code, tm.screen("term"))
	}
}
