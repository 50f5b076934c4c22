package memoryapi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/internal/wrkload"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/server"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/server/tools"
)

// envInt is the integer in $name, or def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// loadStore is a store of n records (BM25 alone, as the service benchmark),
// built once and kept in $TMPDIR/exocortex-bench-rest-N, and its queries.
func loadStore(t *testing.T, n int) (*service.Client, []string) {
	t.Helper()
	ctx := context.Background()
	home := filepath.Join(os.TempDir(), fmt.Sprintf("exocortex-bench-rest-%d", n))
	rng := rand.New(rand.NewPCG(3, 4))
	words := make([]string, 20_000)
	for i := range words {
		words[i] = fmt.Sprintf("w%sq%d", strings.Repeat(string(rune('a'+i%26)), 1+i%3), i)
	}
	zipf := func() string { return words[int(float64(len(words))*rng.Float64()*rng.Float64()*rng.Float64())] }
	c, err := service.Connect(ctx, service.Config{Dir: filepath.Join(home, "memory")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := os.Stat(filepath.Join(home, "ready")); err != nil {
		t.Logf("building a store of %d records in %s (kept for the next run)", n, home)
		for done := 0; done < n; done += 1000 {
			req := &exocortexv1.MemorySaveRequest{Source: &exocortexv1.MemorySource{Source: "bench"}}
			for range min(1000, n-done) {
				var sb strings.Builder
				for j := range 12 {
					if j > 0 {
						sb.WriteByte(' ')
					}
					sb.WriteString(zipf())
				}
				req.Records = append(req.Records, &exocortexv1.MemoryInput{Text: sb.String()})
			}
			if _, err := c.Save(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(home, "ready"), nil, 0o600)
	}
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = zipf() + "+" + zipf()
	}
	return c, queries
}

// cpuTime is the CPU this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// runWrk runs wrk for secs seconds with conns connections over script's
// requests, and reads its figures.
func runWrk(t *testing.T, url, script string, secs, conns int) wrkload.Result {
	t.Helper()
	r, err := wrkload.Run(t.Context(), url, script, secs, conns)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLoadWrk is the load test: wrk on loopback against search and health
// through the real server (its key check, limits and timeouts; the rate limit
// raised out of the way), beside the same searches in-process at the same
// concurrency. It asserts no error and no goroutine or file-descriptor growth
// after it; the figures are logged. By default it is small and short (2,000
// records, 3 s a run); docs/PERFORMANCE.md's figures come from
//
//	make load-serve   (LOAD_N=100000 LOAD_SECONDS=10 LOAD_CONNS=2; LOAD_CPUPROFILE=FILE profiles the HTTP search)
func TestLoadWrk(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk is not installed: `make deps` installs it (Debian package wrk)")
	}
	n, secs, conns := envInt("LOAD_N", 2000), envInt("LOAD_SECONDS", 3), envInt("LOAD_CONNS", 8)
	c, queries := loadStore(t, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const key = "load-secret"
	srv, err := server.New(ctx, server.Options{Addr: "127.0.0.1:0", Keys: []server.Key{{Name: "load", Secret: key, Role: route.Agent}},
		Rate: 1e9, Burst: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.Open(filepath.Join(t.TempDir(), tools.File), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Mount(append(New(c), reg.Routes()...)...); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 2)
	go func() { served <- srv.Serve(ctx) }()
	// The same surface on a second server whose memory is a client of the
	// socket (this process owns the store, so a second Connect is a client):
	// what serve pays when another process (a terminal session) owns it.
	remote, err := service.Connect(ctx, service.Config{Dir: filepath.Join(os.TempDir(), fmt.Sprintf("exocortex-bench-rest-%d", n), "memory")})
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	if remote.Owner() {
		t.Fatal("the second connection owns the store: the first should")
	}
	srv2, err := server.New(ctx, server.Options{Addr: "127.0.0.1:0", Keys: []server.Key{{Name: "load", Secret: key, Role: route.Agent}},
		Rate: 1e9, Burst: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv2.Mount(New(remote)...); err != nil {
		t.Fatal(err)
	}
	go func() { served <- srv2.Serve(ctx) }()
	if resp, err := http.Get(srv2.URL() + "/api/v1/memory/search?q=w&k=1"); err == nil {
		resp.Body.Close()
	}
	// Warm up, then take the baseline of goroutines and descriptors.
	if resp, err := http.Get(srv.URL() + "/health"); err == nil {
		resp.Body.Close()
	}
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(200 * time.Millisecond)
	goroutines, fds := runtime.NumGoroutine(), openFDs()

	script := filepath.Join(t.TempDir(), "search.lua")
	quoted := make([]string, len(queries))
	for i, q := range queries {
		quoted[i] = strconv.Quote(q)
	}
	os.WriteFile(script, []byte(fmt.Sprintf(`local qs = {%s}
local i = 0
wrk.headers["X-API-KEY"] = %q
request = function()
  i = i + 1
  return wrk.format("GET", "/api/v1/memory/search?k=10&q=" .. qs[(i %% #qs) + 1])
end
`, strings.Join(quoted, ","), key)), 0o600)
	health := filepath.Join(t.TempDir(), "health.lua")
	os.WriteFile(health, []byte(`wrk.path = "/health"`+"\n"), 0o600)

	// This process's CPU per request (the server and the store; wrk runs in
	// its own process) is what the machine's load distorts least.
	stopProfile := startProfile(t, os.Getenv("LOAD_CPUPROFILE"))
	cpu0 := cpuTime()
	search := runWrk(t, srv.URL(), script, secs, conns)
	cpu1 := cpuTime()
	stopProfile()
	hres := runWrk(t, srv.URL(), health, secs, conns)
	cpu2 := cpuTime()
	rps, p99 := inProcess(t, c.Store(), queries, time.Duration(secs)*time.Second, conns)
	cpu3 := cpuTime()
	sock := runWrk(t, srv2.URL(), script, secs, conns)
	cpu4 := cpuTime()
	perOp := func(d time.Duration, rate float64) float64 { return float64(d) / 1e6 / (rate * float64(secs)) }
	httpCPU, inCPU, sockCPU := perOp(cpu1-cpu0, search.RPS), perOp(cpu3-cpu2, rps), perOp(cpu4-cpu3, sock.RPS)
	t.Logf("records %d, %d connections, %d s a run, GOMAXPROCS %d", n, conns, secs, runtime.GOMAXPROCS(0))
	t.Logf("search over HTTP (serve owns the store): %.0f req/s, p99 %.2f ms, %.3f CPU-ms each; in-process: %.0f searches/s, p99 %.2f ms, %.3f CPU-ms each; rate ratio %.2f, CPU ratio (in-process/HTTP) %.2f",
		search.RPS, search.P99ms, httpCPU, rps, p99, inCPU, search.RPS/rps, inCPU/httpCPU)
	t.Logf("search over HTTP (serve a client of the socket): %.0f req/s, p99 %.2f ms, %.3f CPU-ms each (server, client and owner); CPU ratio (in-process/HTTP) %.2f",
		sock.RPS, sock.P99ms, sockCPU, inCPU/sockCPU)
	t.Logf("health over HTTP: %.0f req/s, p99 %.2f ms, %.3f CPU-ms each", hres.RPS, hres.P99ms, perOp(cpu2-cpu1, hres.RPS))
	if search.Bad+hres.Bad+sock.Bad > 0 {
		t.Fatalf("errors under load:\n%s\n%s\n%s", search.Raw, hres.Raw, sock.Raw)
	}
	// After the load: the connections wrk opened are gone, and with them
	// their goroutines and descriptors (polled: the server notices the
	// closes asynchronously).
	deadline := time.Now().Add(60 * time.Second)
	for runtime.NumGoroutine() > goroutines+2 || openFDs() > fds+2 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("after the load %d goroutines (before %d), %d descriptors (before %d)\n%s",
				runtime.NumGoroutine(), goroutines, openFDs(), fds, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	for range 2 {
		if err := <-served; err != nil {
			t.Fatal(err)
		}
	}
}

// startProfile writes a CPU profile of what follows to file (none when
// file is empty) until the returned func is called.
func startProfile(t *testing.T, file string) func() {
	t.Helper()
	if file == "" {
		return func() {}
	}
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		t.Logf("CPU profile of the search over HTTP in %s (go tool pprof %s)", file, file)
	}
}

// inProcess runs the same searches on the store itself with conns
// goroutines for d, and returns the rate and the p99 latency in ms.
func inProcess(t *testing.T, st *memory.Store, queries []string, d time.Duration, conns int) (float64, float64) {
	t.Helper()
	if st == nil {
		t.Fatal("this process is not the store's owner (another process serves it): stop it to measure in-process")
	}
	ctx := context.Background()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := w; time.Now().Before(end); i++ {
				q := strings.ReplaceAll(queries[i%len(queries)], "+", " ")
				t0 := time.Now()
				if _, err := st.Search(ctx, q, memory.SearchOptions{Limit: 10}); err != nil {
					t.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(lat) == 0 {
		t.Fatal("no in-process search ran")
	}
	slices.Sort(lat)
	return float64(len(lat)) / d.Seconds(), float64(lat[len(lat)*99/100]) / 1e6
}
