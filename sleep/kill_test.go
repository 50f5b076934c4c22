package sleep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

// The kill-and-resume test runs the consolidation in a child process (this
// test binary, re-executed), kills it with SIGKILL after its Nth journal write,
// starts it again, and compares the end state with an uninterrupted run on an
// identical copy of the fixture.

const (
	envChildHome = "SLEEP_TEST_CHILD_HOME"
	envKillAfter = "SLEEP_TEST_KILL_AFTER"
	childBatch   = 7 // small batches: many points to be killed at
)

func TestMain(m *testing.M) {
	if home := os.Getenv(envChildHome); home != "" {
		os.Exit(childRun(home))
	}
	if home := os.Getenv(envBenchChild); home != "" {
		os.Exit(benchChild(home))
	}
	os.Exit(m.Run())
}

// childResult is what a child prints.
type childResult struct {
	Hash    string `json:"hash"`
	Written int    `json:"written"`
	Resumed bool   `json:"resumed"`
	Changes int    `json:"changes"`
}

func childRun(home string) int {
	fx := fixtureAt(home)
	cfg := fx.config(hashEmb)
	cfg.BatchSize = childBatch
	if s := os.Getenv(envKillAfter); s != "" {
		n, _ := strconv.Atoi(s)
		cfg.OnCommit = func(written int) {
			if written >= n {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	json.NewEncoder(os.Stdout).Encode(childResult{Hash: rep.StateHash, Written: rep.Written, Resumed: rep.Resumed, Changes: rep.Changes})
	return 0
}

// runChild runs the consolidation on home in a child process; killed reports
// whether it died of SIGKILL.
func runChild(t *testing.T, home string, killAfter int) (res childResult, killed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChildHome+"="+home)
	if killAfter > 0 {
		cmd.Env = append(cmd.Env, envKillAfter+"="+strconv.Itoa(killAfter))
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return res, true
		}
	}
	if err != nil {
		t.Fatalf("child on %s: %v\n%s", home, err, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("child output %q: %v", out.String(), err)
	}
	return res, false
}

func TestKillAndResumeEndsInTheSameState(t *testing.T) {
	base := t.TempDir()
	writeFixture(t, base, hashEmb, smallGen(6))
	clean := t.TempDir()
	copyDir(t, base, clean)
	want, _ := runChild(t, clean, 0)
	wantRels := relationshipKeys(t, fixtureAt(clean).rels)
	if want.Written < 20 {
		t.Fatalf("the uninterrupted run wrote only %d journal records", want.Written)
	}
	// Kill points: the first writes (the run's start, the first plan), inside
	// batches, between phases, and the last writes.
	n := want.Written
	// Right after each plan is journaled, before any of its events.
	var afterPlans []int
	i := 0
	staging.Scan(context.Background(), filepath.Join(fixtureAt(clean).store, memory.JournalFile), 0, func(r staging.Record) error {
		if strings.HasPrefix(r.Session, sessionPrefix) {
			i++
			if r.Kind == KindPlan {
				afterPlans = append(afterPlans, i)
			}
		}
		return nil
	})
	if len(afterPlans) != 6 {
		t.Fatalf("plans written at %v, want six", afterPlans)
	}
	points := append([]int{1, 2, 3, n / 5, n / 3, n / 2, 2 * n / 3, n - 2, n - 1}, afterPlans...)
	if raceEnabled || testing.Short() {
		points = []int{1, n / 3, 2 * n / 3, n - 1, afterPlans[1], afterPlans[4]}
	}
	slices.Sort(points)
	points = slices.Compact(points)
	for _, k := range points {
		t.Run(fmt.Sprintf("after_%d_of_%d", k, n), func(t *testing.T) {
			home := t.TempDir()
			copyDir(t, base, home)
			if _, killed := runChild(t, home, k); !killed {
				t.Fatalf("the child was not killed after write %d", k)
			}
			got, _ := runChild(t, home, 0)
			if !got.Resumed || got.Hash != want.Hash || got.Changes != want.Changes {
				t.Fatalf("resumed run: %+v; uninterrupted: %+v", got, want)
			}
			if rels := relationshipKeys(t, fixtureAt(home).rels); !slices.Equal(rels, wantRels) {
				t.Fatalf("relationships: %q, want %q", rels, wantRels)
			}
			// Started once more: nothing left to do.
			again, _ := runChild(t, home, 0)
			if again.Written != 0 || again.Hash != want.Hash {
				t.Fatalf("a third start: %+v", again)
			}
		})
	}
	// Killed in the middle of a write: the journal ends in a torn line, which
	// the store cuts off when it opens (the write never happened).
	t.Run("torn_write", func(t *testing.T) {
		home := t.TempDir()
		copyDir(t, base, home)
		if _, killed := runChild(t, home, n/2); !killed {
			t.Fatal("not killed")
		}
		f, err := os.OpenFile(filepath.Join(fixtureAt(home).store, memory.JournalFile), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"v":1,"seq":999999,"ts":"2026-11-21T12:00:00Z","kind":"memory.archive.v1","session":"sleep:x","payload":{"id":"b0`)
		f.Close()
		if got, _ := runChild(t, home, 0); got.Hash != want.Hash {
			t.Fatalf("hash %s, want %s", got.Hash, want.Hash)
		}
	})
	// Killed twice before finishing.
	t.Run("twice", func(t *testing.T) {
		home := t.TempDir()
		copyDir(t, base, home)
		if _, killed := runChild(t, home, n/4); !killed {
			t.Fatal("not killed")
		}
		if _, killed := runChild(t, home, n/4); !killed {
			t.Fatal("not killed the second time")
		}
		if got, _ := runChild(t, home, 0); got.Hash != want.Hash {
			t.Fatalf("hash %s, want %s", got.Hash, want.Hash)
		}
	})
}
