package natstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Binary finds the nats-server binary `make nats-server` builds into
// .tools/bin (or $EXOCORTEX_NATS_SERVER), "" when there is none.
func Binary() string {
	if p := os.Getenv("EXOCORTEX_NATS_SERVER"); p != "" {
		return p
	}
	return Tool("nats-server")
}

// Tool finds the program name in the repository's .tools/bin ("" if absent).
func Tool(name string) string {
	dir, err := os.Getwd()
	for err == nil {
		p := filepath.Join(dir, ".tools", "bin", name)
		if _, serr := os.Stat(p); serr == nil {
			return p
		}
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	return ""
}

// Cluster is a JetStream cluster of real nats-server processes on loopback.
type Cluster struct {
	t     testing.TB
	bin   string
	dir   string
	ports []int
	procs []*proc
}

type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// StartCluster starts n nodes of bin (Binary), each with its own store under
// a temporary directory; they are killed when the test ends.
func StartCluster(t testing.TB, bin string, n int) *Cluster {
	t.Helper()
	c := &Cluster{t: t, bin: bin, dir: t.TempDir()}
	var routes []string
	cports := make([]int, n)
	for i := range n {
		c.ports = append(c.ports, freePort(t))
		cports[i] = freePort(t)
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", cports[i]))
	}
	for i := range n {
		conf := fmt.Sprintf(`server_name: n%d
listen: 127.0.0.1:%d
jetstream { store_dir: %q }
cluster { name: exo-test, listen: 127.0.0.1:%d, routes: [%s] }
`, i+1, c.ports[i], filepath.Join(c.dir, fmt.Sprintf("n%d", i+1)), cports[i], strings.Join(routes, ", "))
		if err := os.WriteFile(c.conf(i), []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c.procs = make([]*proc, n)
	for i := range n {
		c.Restart(i)
	}
	t.Cleanup(func() {
		for i := range c.procs {
			c.Kill(i)
		}
	})
	return c
}

func (c *Cluster) conf(i int) string { return filepath.Join(c.dir, fmt.Sprintf("n%d.conf", i+1)) }

// URL lists every node's client URL, comma-separated.
func (c *Cluster) URL() string {
	var out []string
	for _, p := range c.ports {
		out = append(out, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	return strings.Join(out, ",")
}

// Kill stops node i with SIGKILL (a crash).
func (c *Cluster) Kill(i int) {
	if p := c.procs[i]; p != nil {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		c.procs[i] = nil
	}
}

// Restart starts node i again with its store.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.procs[i] != nil {
		return
	}
	log, err := os.OpenFile(filepath.Join(c.dir, fmt.Sprintf("n%d.log", i+1)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(c.bin, "-c", c.conf(i))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("natstest: starting %s: %v", c.bin, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); log.Close(); close(p.done) }()
	c.procs[i] = p
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := dialTCP(c.ports[i])
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("natstest: node %d does not listen on %d after 60s (log %s)", i+1, c.ports[i], filepath.Join(c.dir, fmt.Sprintf("n%d.log", i+1)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
