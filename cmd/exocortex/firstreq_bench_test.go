package main

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/internal/procstat"
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
		b.ReportMetric(medianOf(bl.first), bl.name+"first-request-ms")
		b.ReportMetric(medianOf(bl.cpuFirst), bl.name+"cpu-to-first-ms")
		b.ReportMetric(medianOf(bl.pss), bl.name+"pss-MB")
		b.ReportMetric(medianOf(bl.wall), bl.name+"wall-ms")
		b.ReportMetric(medianOf(bl.cpu), bl.name+"cpu-ms")
	}
	if len(builds) == 2 {
		b.ReportMetric(medianOf(builds[0].first)/medianOf(builds[1].first), "first-ratio")
		b.ReportMetric(medianOf(builds[0].cpuFirst)/medianOf(builds[1].cpuFirst), "cpu-first-ratio")
		b.ReportMetric(medianOf(builds[0].cpu)/medianOf(builds[1].cpu), "cpu-ratio")
		b.ReportMetric(medianOf(builds[0].pss)/medianOf(builds[1].pss), "pss-ratio")
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
				cpu, pss := procstat.Tree(pid)
				m.cpuFirst, m.pss = float64(cpu.Microseconds())/1e3, pss
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
