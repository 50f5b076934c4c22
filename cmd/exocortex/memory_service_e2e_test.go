package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestHelperExocortex runs the exocortex command line named by
// EXOCORTEX_TEST_ARGS (arguments separated by \x1f), as the binary would, with
// SIGTERM ending its context: the process the memory service tests start.
func TestHelperExocortex(t *testing.T) {
	args := os.Getenv("EXOCORTEX_TEST_ARGS")
	if args == "" {
		t.Skip("helper process")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	root.SetArgs(strings.Split(args, "\x1f"))
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serviceHome is a home whose socket path fits a unix socket.
func serviceHome(t *testing.T) string {
	t.Helper()
	home, err := os.MkdirTemp("", "exo-memsvc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	return home
}

func exocortexProcess(ctx context.Context, home string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperExocortex$")
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "EXOCORTEX_TEST_ARGS="+strings.Join(args, "\x1f"))
	return cmd
}

// longRunning starts a process and returns it with its first line of output.
func longRunning(t *testing.T, ctx context.Context, home string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exocortexProcess(ctx, home, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatalf("%v: no output: %s", args, stderr.String())
	}
	return cmd, sc.Text()
}

// TestMemoryServiceAcrossProcesses: one process serves the store while other
// processes (memory add, search, stats, sleep --dry-run, a standby serve)
// answer through it, none refused; the owner is killed with SIGKILL while
// writes go on; the standby takes the store over, every acknowledged write is
// there exactly once, and memory replay --verify agrees with the live store.
func TestMemoryServiceAcrossProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	home := serviceHome(t)
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		cmd := exocortexProcess(ctx, home, args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	owner, line := longRunning(t, ctx, home, "memory", "serve", "--embedder", "none")
	if !strings.HasPrefix(line, "serving ") || !strings.Contains(line, fmt.Sprintf("(pid %d)", owner.Process.Pid)) {
		t.Fatalf("the owner says %q", line)
	}
	sock := filepath.Join(home, "run", "memory.sock")
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v", sock, err)
	}

	// Clients write and read; none is refused.
	id := strings.TrimSpace(run("memory", "add", "--embedder", "none", "the lighthouse keeper logs every passing ship"))
	var res struct {
		Hits []struct {
			Record struct{ ID string } `json:"record"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(run("memory", "search", "--json", "--embedder", "none", "lighthouse ships")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Record.ID != id {
		t.Fatalf("search from another process: %+v; want %s", res.Hits, id)
	}
	var plan struct {
		DryRun bool `json:"dry_run"`
	}
	if err := json.Unmarshal([]byte(run("sleep", "--dry-run", "--json", "--embedder", "none")), &plan); err != nil || !plan.DryRun {
		t.Fatalf("sleep --dry-run beside the owner: %+v %v", plan, err)
	}
	// A second long-running process stands by as a client.
	standby, line := longRunning(t, ctx, home, "memory", "serve", "--embedder", "none")
	if want := fmt.Sprintf("standing by: pid %d serves", owner.Process.Pid); !strings.HasPrefix(line, want) {
		t.Fatalf("the second serve says %q; want %q", line, want)
	}

	// Writes go on while the owner is killed.
	var mu sync.Mutex
	var acked []string
	acks := make(chan struct{}, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 24 {
			var out, errb bytes.Buffer
			cmd := exocortexProcess(ctx, home, "memory", "add", "--embedder", "none", fmt.Sprintf("tide table entry %d for the harbour", i))
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Errorf("memory add %d: %v\n%s", i, err, errb.String())
				return
			}
			mu.Lock()
			acked = append(acked, strings.TrimSpace(out.String()))
			mu.Unlock()
			acks <- struct{}{}
		}
	}()
	for range 6 {
		<-acks
	}
	if err := owner.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	owner.Wait()
	<-done
	if t.Failed() {
		return
	}

	// The standby owns the store now (or takes it after a short-lived
	// owner, a memory add that came first, ended).
	var owned bool
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		pctx, pcancel := context.WithCancel(ctx)
		probe, line := longRunning(t, pctx, home, "memory", "serve", "--embedder", "none")
		probe.Process.Signal(syscall.SIGTERM)
		probe.Wait()
		pcancel()
		if strings.HasPrefix(line, fmt.Sprintf("standing by: pid %d serves", standby.Process.Pid)) {
			owned = true
			break
		}
	}
	if !owned {
		t.Fatal("the standby did not take the store over")
	}

	// Every acknowledged write is in the store exactly once.
	count := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(run("memory", "export", "--embedder", "none")), "\n") {
		var r struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("export line %q: %v", l, err)
		}
		count[r.ID]++
	}
	for _, a := range append([]string{id}, acked...) {
		if count[a] != 1 {
			t.Errorf("record %s: %d times in the store; want once", a, count[a])
		}
	}
	if len(count) != 1+len(acked) {
		t.Errorf("%d records; want %d", len(count), 1+len(acked))
	}
	var rep struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(run("memory", "replay", "--verify", "--json", "--embedder", "none")), &rep); err != nil || !rep.OK {
		t.Fatalf("replay --verify: %+v %v", rep, err)
	}

	// The standby ends cleanly and takes its socket with it.
	if err := standby.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := standby.Wait(); err != nil {
		t.Fatalf("the standby's exit: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("the socket outlived its owner: %v", err)
	}
}

// TestMemoryServiceKillLiveSession: a live `run -p` session (scripted model,
// its reply streamed slowly) owns the home's memory while other processes
// write through it and a `memory serve` stands by; the session is killed with
// SIGKILL mid-write; the standby takes the store over, every acknowledged
// write is there exactly once, and memory replay --verify agrees.
func TestMemoryServiceKillLiveSession(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	home := serviceHome(t)
	project := t.TempDir()
	exo := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "EXOCORTEX_EMBEDDER=none")
		return cmd
	}
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		cmd := exo(args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	ownerPID := func() int {
		t.Helper()
		var st struct {
			OwnerPID int `json:"owner_pid"`
		}
		if err := json.Unmarshal([]byte(run("memory", "stats", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		return st.OwnerPID
	}
	waitOwner := func(who string, pid int) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ownerPID() != pid; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s (pid %d) did not become the owner", who, pid)
			}
		}
	}
	seed := strings.TrimSpace(run("memory", "add", "the breakwater was lengthened in spring"))

	// The session: its one reply streams for about a minute.
	hold := `{"thoughts": ["` + strings.Repeat("keeping the session open ", 24) + `"], "tool_name": "response", "tool_args": {"text": "HELD"}}`
	script := liveScript(t, project, "hold.yaml", fmt.Sprintf("model: hold\nreplies:\n  - content: '%s'\n    chunk_size: 1\n    delay: 100ms\n", hold))
	session := exo("run", "-p", "hold the memory", "--json", "--model", "script:"+script)
	// Its own process group, so that its plugin processes can be ended with
	// it once the test is done (the kill itself is the session's alone).
	session.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var sessErr bytes.Buffer
	session.Stderr = &sessErr
	if err := session.Start(); err != nil {
		t.Fatal(err)
	}
	sessDone := make(chan error, 1)
	go func() { sessDone <- session.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-session.Process.Pid, syscall.SIGKILL)
		<-sessDone
	})
	waitOwner("the live session", session.Process.Pid)

	// A standby client, to take the store over.
	standby := exo("memory", "serve", "--embedder", "none")
	out, err := standby.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := standby.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { standby.Process.Kill(); standby.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), fmt.Sprintf("standing by: pid %d serves", session.Process.Pid)) {
		t.Fatalf("the standby says %q", sc.Text())
	}
	go func() {
		for sc.Scan() {
		}
	}()

	// Writes go on through the session while it is killed.
	var acked []string
	acks := make(chan string)
	go func() {
		defer close(acks)
		for i := range 20 {
			var out, errb bytes.Buffer
			cmd := exo("memory", "add", fmt.Sprintf("buoy %d marks the channel", i))
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Errorf("memory add %d: %v\n%s", i, err, errb.String())
				return
			}
			acks <- strings.TrimSpace(out.String())
		}
	}()
	for id := range acks {
		acked = append(acked, id)
		if len(acked) == 5 {
			select {
			case err := <-sessDone:
				sessDone <- err
				t.Fatalf("the live session ended before the kill (make its reply slower): %v\n%s", err, sessErr.String())
			default:
			}
			if err := session.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	if t.Failed() {
		return
	}
	if len(acked) != 20 {
		t.Fatalf("%d writes acknowledged; want 20", len(acked))
	}
	waitOwner("the standby", standby.Process.Pid)

	// Every acknowledged write is in the store exactly once.
	ids, texts := exportCounts(t, run("memory", "export"))
	for _, id := range append([]string{seed}, acked...) {
		if ids[id] != 1 {
			t.Errorf("record %s: %d times in the store; want once", id, ids[id])
		}
	}
	for i := range 20 {
		if n := texts[fmt.Sprintf("buoy %d marks the channel", i)]; n != 1 {
			t.Errorf("buoy %d: %d records; want one", i, n)
		}
	}
	var rep struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(run("memory", "replay", "--verify", "--json")), &rep); err != nil || !rep.OK {
		t.Fatalf("replay --verify: %+v %v", rep, err)
	}
	if err := standby.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := standby.Wait(); err != nil {
		t.Fatalf("the standby's exit: %v", err)
	}
}
