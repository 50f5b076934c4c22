package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// BenchmarkFirstRequest measures what a user of `exocortex run -p "hello"`
// waits for before the model is asked anything: the time from exec to the first
// chat request arriving at a scripted OpenAI-compatible server (the real binary,
// its real plugin processes, the real provider client), the CPU the process tree
// had used by then (the exocortex process and every process under it, read from
// /proc as the request arrives), and the tree's proportional set size (PSS) at
// that moment; and for the whole run, its wall time and its tree's CPU (rusage).
//
// FIRSTREQ_OLD_EXE names another build (an older commit's exocortex) to run in
// turns with this one, run by run, so both see the same load; the ratio metrics
// are this build's medians over the other's.
//
//	go test ./cmd/exocortex -run '^$' -bench FirstRequest -benchtime 10x
//	FIRSTREQ_OLD_EXE=/tmp/old/exocortex go test ./cmd/exocortex -run '^$' -bench FirstRequest -benchtime 10x
func BenchmarkFirstRequest(b *testing.B) {
	type build struct {
		name, exe, home string
		first, wall     []float64 // ms
		cpuFirst, cpu   []float64 // ms
		pss             []float64 // MB
	}
	builds := []*build{{name: "", exe: sdktest.BuildPlugin(b, "github.com/exocortex/exocortex/cmd/exocortex")}}
	if old := os.Getenv("FIRSTREQ_OLD_EXE"); old != "" {
		builds = append(builds, &build{name: "old-", exe: old})
	}
	for _, bl := range builds {
		bl.home = b.TempDir()
		firstRequest(b, bl.exe, bl.home) // untimed: page cache, the home's first files
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range builds {
			bl := builds[(i+j)%len(builds)] // alternate which goes first
			m := firstRequest(b, bl.exe, bl.home)
			bl.first = append(bl.first, m.first)
			bl.wall = append(bl.wall, m.wall)
			bl.cpuFirst = append(bl.cpuFirst, m.cpuFirst)
			bl.cpu = append(bl.cpu, m.cpu)
			bl.pss = append(bl.pss, m.pss)
		}
	}
	b.StopTimer()
	for _, bl := range builds {
		b.ReportMetric(medianF(bl.first), bl.name+"first-request-ms")
		b.ReportMetric(medianF(bl.cpuFirst), bl.name+"cpu-to-first-ms")
		b.ReportMetric(medianF(bl.pss), bl.name+"pss-MB")
		b.ReportMetric(medianF(bl.wall), bl.name+"wall-ms")
		b.ReportMetric(medianF(bl.cpu), bl.name+"cpu-ms")
	}
	if len(builds) == 2 {
		b.ReportMetric(medianF(builds[0].first)/medianF(builds[1].first), "first-ratio")
		b.ReportMetric(medianF(builds[0].cpuFirst)/medianF(builds[1].cpuFirst), "cpu-first-ratio")
		b.ReportMetric(medianF(builds[0].cpu)/medianF(builds[1].cpu), "cpu-ratio")
		b.ReportMetric(medianF(builds[0].pss)/medianF(builds[1].pss), "pss-ratio")
	}
}

type firstReqMeasure struct{ first, wall, cpuFirst, cpu, pss float64 }

// firstRequest runs `exocortex run -p hello` once against a fresh scripted
// server and measures it (see BenchmarkFirstRequest).
func firstRequest(b *testing.B, exe, home string) firstReqMeasure {
	b.Helper()
	srv, err := scripted.NewOpenAIServer(scripted.Script{Replies: []scripted.Reply{
		{Content: `{"thoughts":["greet"],"tool_name":"response","tool_args":{"text":"Hello!"}}`},
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	// A run ends by closing its connections, which the proxy would log.
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	var (
		once     sync.Once
		pid      int
		pidReady = make(chan struct{})
		m        firstReqMeasure
		t0       time.Time
	)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			once.Do(func() {
				m.first = float64(time.Since(t0).Microseconds()) / 1e3
				<-pidReady
				m.cpuFirst, m.pss = treeUsage(pid)
			})
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	cmd := exec.Command(exe, "run", "-p", "hello", "--provider", "openai", "--model", srv.Model())
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "OPENAI_BASE_URL="+front.URL+"/v1", "EXOCORTEX_EMBEDDER=none")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	t0 = time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	pid = cmd.Process.Pid
	close(pidReady)
	err = cmd.Wait()
	m.wall = float64(time.Since(t0).Microseconds()) / 1e3
	if err != nil {
		b.Fatalf("exocortex run -p hello: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(out.String(), "Hello!") {
		b.Fatalf("no answer from the scripted model; stdout:\n%s\nstderr:\n%s", out.String(), stderr.String())
	}
	if m.first == 0 {
		b.Fatal("no chat request reached the scripted server")
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		// wait4's usage covers the process and the children it waited for.
		m.cpu = float64(time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Microseconds()) / 1e3
	}
	return m
}

// treeUsage sums the CPU (user and system, with the children already waited
// for) and the PSS of pid and every process under it, from /proc.
func treeUsage(pid int) (cpuMS, pssMB float64) {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	stats := map[int][]string{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name may hold spaces: the fields start after its ')'.
		i := bytes.LastIndexByte(raw, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(raw[i+1:]))
		if len(f) < 15 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
		stats[p] = f
	}
	in := func(p int) bool {
		for ; p > 1; p = parent[p] {
			if p == pid {
				return true
			}
		}
		return false
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	for p, f := range stats {
		if !in(p) {
			continue
		}
		// utime, stime, cutime, cstime: fields 14-17 of stat, 11-14 after the name.
		for _, s := range f[11:15] {
			v, _ := strconv.ParseFloat(s, 64)
			cpuMS += v * 1000 / ticksPerSecond
		}
		pssMB += pss(p)
	}
	return cpuMS, pssMB
}

// pss is a process's proportional set size in MB (smaps_rollup), 0 if unknown.
func pss(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

func medianF(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
