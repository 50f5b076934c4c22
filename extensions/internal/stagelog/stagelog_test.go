package stagelog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/exocortex/exocortex/staging"
)

func TestConcurrentAppendersAndRead(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", StagingFile)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := Append(ctx, path, []Entry{{Kind: KindInsight, Session: "s", Payload: map[string]int{"i": i}}}, nil); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	n := 0
	if err := Read(ctx, path, 0, func(r Record) error {
		if r.Kind != KindInsight {
			t.Errorf("kind %q", r.Kind)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Fatalf("%d records, want 4", n)
	}
	if err := Read(ctx, filepath.Join(t.TempDir(), "missing.jsonl"), 0, func(Record) error { return nil }); err != nil {
		t.Fatalf("missing file: %v", err)
	}
}

// TestHelperAppender is the appending process of TestConcurrentProcesses:
// STAGELOG_APPEND names the log, STAGELOG_WRITER the writer; it appends
// STAGELOG_COUNT entries one at a time.
func TestHelperAppender(t *testing.T) {
	path := os.Getenv("STAGELOG_APPEND")
	if path == "" {
		t.Skip("helper process")
	}
	n, _ := strconv.Atoi(os.Getenv("STAGELOG_COUNT"))
	for i := range n {
		if _, err := Append(context.Background(), path, []Entry{{Kind: KindInsight, Session: os.Getenv("STAGELOG_WRITER"), Payload: map[string]int{"i": i}}}, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(0)
}

// TestConcurrentProcesses: several processes append to one staging log at
// once, entry by entry (as the plugins' processes do): every append succeeds,
// every entry is there exactly once, the sequence numbers run 1..n without a
// gap or a repeat, and no line is torn.
func TestConcurrentProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), StagingFile)
	const writers, each = 6, 15
	cmds := make([]*exec.Cmd, writers)
	outs := make([]*bytes.Buffer, writers)
	for w := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppender$")
		cmd.Env = append(os.Environ(), "STAGELOG_APPEND="+path, fmt.Sprintf("STAGELOG_WRITER=w%d", w), fmt.Sprintf("STAGELOG_COUNT=%d", each))
		outs[w] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[w], outs[w]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[w] = cmd
	}
	for w, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer %d: %v\n%s", w, err, outs[w])
		}
	}
	seen := map[string]bool{}
	var seq uint64
	if err := Read(context.Background(), path, 0, func(r Record) error {
		var p struct{ I int }
		if err := r.Decode(&p); err != nil {
			return err
		}
		key := fmt.Sprintf("%s/%d", r.Session, p.I)
		if seen[key] {
			t.Errorf("entry %s twice", key)
		}
		seen[key] = true
		if r.Seq != seq+1 {
			t.Errorf("sequence %d after %d", r.Seq, seq)
		}
		seq = r.Seq
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != writers*each {
		t.Errorf("%d entries in the log, want %d", len(seen), writers*each)
	}
	bad, err := staging.Scan(context.Background(), path, 0, func(staging.Record) error { return nil })
	if err != nil || len(bad) > 0 {
		t.Errorf("scanning the log: %v, bad lines %+v", err, bad)
	}
}
