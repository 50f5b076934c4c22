package service

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// shortHome is a home whose socket path fits a unix socket (t.TempDir's names
// can be long).
func shortHome(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "memsvc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func connect(t *testing.T, ctx context.Context, home string) *Client {
	t.Helper()
	c, err := Connect(ctx, Config{Dir: filepath.Join(home, "memory")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func save(ctx context.Context, c exocortexv1.MemoryServiceClient, text string) (*exocortexv1.MemoryRecord, error) {
	resp, err := c.Save(ctx, &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{{Text: text}},
		Source: &exocortexv1.MemorySource{Source: "test"}})
	if err != nil {
		return nil, err
	}
	return resp.GetRecords()[0], nil
}

// TestOwnerAndClients: the first Connect owns the store, the second is its
// client; what one writes the other finds; when the owner closes, the client
// takes the store over and keeps everything.
func TestOwnerAndClients(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	home := shortHome(t)
	a := connect(t, ctx, home)
	b := connect(t, ctx, home)
	if !a.Owner() || b.Owner() {
		t.Fatalf("owner: a %v, b %v; want a alone", a.Owner(), b.Owner())
	}
	fi, err := os.Stat(filepath.Join(home, "run", SocketFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	ra, err := save(ctx, a, "the owner writes about lighthouses")
	if err != nil {
		t.Fatal(err)
	}
	rb, err := save(ctx, b, "the client writes about submarines")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c     exocortexv1.MemoryServiceClient
		query string
		want  string
	}{{a, "submarines", rb.GetId()}, {b, "lighthouses", ra.GetId()}} {
		res, err := tc.c.Search(ctx, &exocortexv1.MemorySearchRequest{Query: tc.query})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GetHits()) != 1 || res.GetHits()[0].GetRecord().GetId() != tc.want || res.GetHits()[0].GetWhy() == "" {
			t.Fatalf("search %q: %v; want %s with a why", tc.query, res.GetHits(), tc.want)
		}
	}
	sa, _ := a.Stats(ctx, &exocortexv1.MemoryStatsRequest{})
	sb, _ := b.Stats(ctx, &exocortexv1.MemoryStatsRequest{})
	if sa.GetStateHash() != sb.GetStateHash() || sa.GetRecords() != 2 || int(sb.GetOwnerPid()) != os.Getpid() {
		t.Fatalf("stats: %v / %v", sa, sb)
	}
	_, err = b.Get(ctx, &exocortexv1.MemoryGetRequest{})
	if re := Error(err); re == nil || !strings.Contains(re.Error(), "give an id") {
		t.Fatalf("get without id: %v", re)
	}
	if _, err := b.Archive(ctx, &exocortexv1.MemoryArchiveRequest{Id: "nosuch"}); !isNotFound(err) {
		t.Fatalf("archive of an unknown id: %v; want not found", err)
	}

	// The watch sees both writes, then a third as it is made.
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	w, err := b.Watch(wctx, &exocortexv1.MemoryWatchRequest{KindPrefix: memory.KindPrefix, Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := w.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	rc, err := save(ctx, a, "a third record while watched")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := w.Recv()
	if err != nil || !strings.Contains(string(ev.GetEvent().GetPayload()), rc.GetId()) {
		t.Fatalf("watch: %v, %v; want the third record", ev, err)
	}
	wcancel()

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// b takes over: its next call is answered by itself.
	res, err := b.Get(ctx, &exocortexv1.MemoryGetRequest{Id: ra.GetId()})
	if err != nil || !res.GetFound() {
		t.Fatalf("after the owner closed: %v, %v", res, err)
	}
	if !b.Owner() {
		t.Fatal("the client did not take the store over")
	}
}

func isNotFound(err error) bool {
	re, ok := Error(err).(*RemoteError)
	return ok && re.Unwrap() == memory.ErrNotFound
}

// TestMain runs the child owner of TestKillOwner when asked to.
func TestMain(m *testing.M) {
	if home := os.Getenv("MEMSVC_CHILD_OWNER"); home != "" {
		os.Exit(childOwner(home))
	}
	os.Exit(m.Run())
}

// childOwner owns the store and writes until killed, printing each id once
// the service acknowledged it.
func childOwner(home string) int {
	ctx := context.Background()
	c, err := Connect(ctx, Config{Dir: filepath.Join(home, "memory")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("owner %v\n", c.Owner())
	for i := 0; ; i++ {
		r, err := save(ctx, c, fmt.Sprintf("child record %d about tidal energy", i))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("ack %s\n", r.GetId())
	}
}

// TestKillOwner: a child process owns the store and writes; this process, a
// client, writes too; the child is killed with SIGKILL mid-write. This
// process takes the store over, and every write either side saw acknowledged
// is in the store exactly once, and a replay of the journal matches the state.
func TestKillOwner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	home := shortHome(t)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MEMSVC_CHILD_OWNER="+home)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "owner true" {
		t.Fatalf("child: %q", lines.Text())
	}
	var mu sync.Mutex
	acked := map[string]int{}
	childAcks := make(chan struct{}, 1<<16)
	go func() {
		for lines.Scan() {
			if id, ok := strings.CutPrefix(lines.Text(), "ack "); ok {
				mu.Lock()
				acked[id]++
				mu.Unlock()
				childAcks <- struct{}{}
			}
		}
	}()
	c := connect(t, ctx, home)
	if c.Owner() {
		t.Fatal("the test process owns the store the child holds")
	}
	// Write from here while the child writes, and kill it mid-stream.
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 300; i++ {
			r, err := save(ctx, c, fmt.Sprintf("client record %d about wind power", i))
			if err != nil {
				done <- err
				return
			}
			mu.Lock()
			acked[r.GetId()]++
			mu.Unlock()
		}
		done <- nil
	}()
	for i := 0; i < 50; i++ {
		<-childAcks
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if err := <-done; err != nil {
		t.Fatalf("a client write after the owner was killed: %v", err)
	}
	if !c.Owner() {
		t.Fatal("the client did not take the store over")
	}
	mu.Lock()
	defer mu.Unlock()
	var all []*exocortexv1.MemoryRecord
	list, err := c.List(ctx, &exocortexv1.MemoryListRequest{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for {
		resp, err := list.Recv()
		if err != nil {
			break
		}
		all = append(all, resp.GetRecords()...)
	}
	seen := map[string]int{}
	for _, r := range all {
		seen[r.GetId()]++
	}
	for id, n := range acked {
		if n != 1 || seen[id] != 1 {
			t.Errorf("record %s: acknowledged %d times, in the store %d times; want once", id, n, seen[id])
		}
	}
	if len(acked) < 350 {
		t.Errorf("%d acknowledged writes; want at least 350", len(acked))
	}
	st, err := c.Stats(ctx, &exocortexv1.MemoryStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := memory.Replay(ctx, st.GetJournalPath(), t.TempDir(), memory.Options{})
	if err != nil || rep.StateHash != st.GetStateHash() || rep.Records != int(st.GetRecords()) {
		t.Fatalf("replay: %+v, %v; live hash %s, %d records", rep, err, st.GetStateHash(), st.GetRecords())
	}
}
