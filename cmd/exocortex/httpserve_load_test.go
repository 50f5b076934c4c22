package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/internal/procstat"
	"github.com/exocortex/exocortex/internal/wrkload"
)

// TestServeChatUnderWrk is serve's load test for a scripted chat: wrk on
// loopback posting OpenAI chat completions, each a whole monologue (the
// built-in suite's hooks, the memory it writes at the end) in one of four
// sessions, through the real binary with its key check and limits (the rate
// limit raised out of the way in config). It asserts that every request was
// answered 2xx and that serve's file descriptors are back to what they were
// once wrk's connections have closed; the figures are logged. Short by
// default; LOAD_SECONDS and LOAD_CONNS lengthen it (make load-serve).
func TestServeChatUnderWrk(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk is not installed: `make deps` installs it (Debian package wrk)")
	}
	secs, conns := envInt(t, "LOAD_SECONDS", 3), envInt(t, "LOAD_CONNS", 2)
	// Enough replies for the run at well over any rate this machine reaches:
	// one that runs out answers an error, which fails the test by name.
	var script strings.Builder
	script.WriteString("model: scripted\nreplies:\n")
	for i := range secs * 400 {
		fmt.Fprintf(&script, "  - content: '{\"thoughts\":[\"answer\"],\"tool_name\":\"response\",\"tool_args\":{\"text\":\"answer %d\"}}'\n", i)
	}
	const key = "load-key"
	s := startServe(t, serveBinary(t), script.String(), "serve:\n  rate_per_second: 1000000\n  rate_burst: 1000000\n", nil, "EXOCORTEX_API_KEY="+key)
	body := func(i int) string {
		return fmt.Sprintf(`{"model":"exocortex","user":"load-%d","messages":[{"role":"user","content":"hello %d"}]}`, i%4, i)
	}
	// Warm up each session (its first turn opens it), then take the baseline.
	for i := range 4 {
		if st, b := s.do(t, "POST", "/v1/chat/completions", body(i), "Authorization", "Bearer "+key); st != 200 {
			t.Fatalf("warm-up completion %d: %d %v\n%s", i, st, b, s.log())
		}
	}
	pid := s.cmd.Process.Pid
	fds := countFDs(t, pid)

	lua := filepath.Join(t.TempDir(), "chat.lua")
	os.WriteFile(lua, []byte(fmt.Sprintf(`local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %s"
request = function()
  i = i + 1
  return wrk.format(nil, "/v1/chat/completions", nil,
    string.format('{"model":"exocortex","user":"load-%%d","messages":[{"role":"user","content":"hello %%d"}]}', i %% 4, i))
end
`, key)), 0o600)
	health := filepath.Join(t.TempDir(), "health.lua")
	os.WriteFile(health, []byte(`wrk.path = "/health"`+"\n"), 0o600)

	cpu0 := processCPU(t, pid)
	chat, err := wrkload.Run(t.Context(), s.url, lua, secs, conns)
	if err != nil {
		t.Fatalf("%v\nserve's stderr:\n%s", err, s.log())
	}
	cpu1 := processCPU(t, pid)
	hres, err := wrkload.Run(t.Context(), s.url, health, secs, conns)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scripted chat over /v1/chat/completions, %d connections, 4 sessions, %d s: %.1f completions/s, p99 %.1f ms, %.1f CPU-ms each in serve (its in-process plugins included, its plugin processes not)",
		conns, secs, chat.RPS, chat.P99ms, float64(cpu1-cpu0)/1e6/(chat.RPS*float64(secs)))
	t.Logf("health beside it: %.0f req/s, p99 %.2f ms", hres.RPS, hres.P99ms)
	if chat.Bad+hres.Bad > 0 {
		t.Fatalf("failed requests under load:\n%s\n%s\nserve's stderr:\n%s", chat.Raw, hres.Raw, s.log())
	}
	deadline := time.Now().Add(60 * time.Second)
	for n := countFDs(t, pid); n > fds+2; n = countFDs(t, pid) {
		if time.Now().After(deadline) {
			t.Fatalf("serve holds %d file descriptors after the load, %d before it", n, fds)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// envInt is the positive integer in $name, or def.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("$%s=%q: want a positive integer", name, v)
	}
	return n
}

// countFDs is how many file descriptors process pid has open.
func countFDs(t *testing.T, pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("serve's descriptors: %v", err)
	}
	return len(ents)
}

// processCPU is the CPU time serve's own process has used.
func processCPU(t *testing.T, pid int) time.Duration {
	d, err := procstat.ProcessCPU(pid)
	if err != nil {
		t.Fatalf("serve's CPU: %v", err)
	}
	return d
}
