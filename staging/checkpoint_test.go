package staging

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckpoint opens a log at a checkpoint taken earlier: where the log still
// has that record there, Open scans only the tail (and Read from the checkpoint
// starts there); where it does not, Open scans everything as before and says the
// checkpoint did not hold.
func TestCheckpoint(t *testing.T) {
	ctx := context.Background()
	write := func(t *testing.T, path string, n int) Checkpoint {
		l, err := Open(ctx, path, Options{Sync: SyncOS, Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if _, err := l.Append(ctx, "k", "", map[string]int{"i": i}); err != nil {
				t.Fatal(err)
			}
		}
		at := l.Position()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		return at
	}
	cases := []struct {
		name    string
		change  func(t *testing.T, path string, at *Checkpoint)
		matched bool
		last    uint64
	}{
		{"unchanged", func(*testing.T, string, *Checkpoint) {}, true, 10},
		{"tail appended", func(t *testing.T, path string, _ *Checkpoint) { write(t, path, 5) }, true, 15},
		{"torn tail after it", func(t *testing.T, path string, _ *Checkpoint) {
			appendBytes(t, path, `{"v":1,"seq":11,"ts":"2026-01-01T00:00:00Z","kind":"k","pay`)
		}, true, 10},
		{"wrong sequence", func(_ *testing.T, _ string, at *Checkpoint) { at.Seq = 9 }, false, 10},
		{"a line before it changed in place, same length", func(t *testing.T, path string, _ *Checkpoint) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			i := bytes.Index(b, []byte(`"i":4`))
			if i < 0 {
				t.Fatalf("no record with i 4 in %s", b)
			}
			b[i+4] = '7'
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, false, 10},
		{"no checksum", func(_ *testing.T, _ string, at *Checkpoint) { at.CRC32C = 0 }, false, 10},
		// Trusted: the caller vouches that the log was not written since the
		// checksum held, so it is not read again (a wrong one goes unseen);
		// the line at the checkpoint is still checked.
		{"wrong checksum, trusted", func(_ *testing.T, _ string, at *Checkpoint) { at.CRC32C++; at.Trusted = true }, true, 10},
		{"wrong sequence, trusted", func(_ *testing.T, _ string, at *Checkpoint) { at.Seq = 9; at.Trusted = true }, false, 10},
		{"not at a line end", func(_ *testing.T, _ string, at *Checkpoint) { at.Size-- }, false, 10},
		{"log shorter than the checkpoint", func(t *testing.T, path string, at *Checkpoint) {
			if err := os.Truncate(path, at.Size/2); err != nil {
				t.Fatal(err)
			}
		}, false, 0},
		{"log replaced", func(t *testing.T, path string, _ *Checkpoint) {
			os.Remove(path)
			write(t, path, 3)
		}, false, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			at := write(t, path, 10)
			tc.change(t, path, &at)
			l := openT(t, path, Options{Checkpoint: &at})
			if got := l.CheckpointMatched(); got != tc.matched {
				t.Errorf("CheckpointMatched() = %v, want %v", got, tc.matched)
			}
			if tc.name == "log shorter than the checkpoint" {
				tc.last = l.LastSeq() // whatever survived the cut; must be below 10
				if tc.last >= 10 {
					t.Fatalf("LastSeq %d after cutting the log", tc.last)
				}
			}
			if got := l.LastSeq(); got != tc.last {
				t.Errorf("LastSeq() = %d, want %d", got, tc.last)
			}
			// Every record is still readable, and a read from the checkpoint
			// gives exactly the tail.
			if got := readAll(t, l, 0); uint64(len(got)) != tc.last {
				t.Errorf("read %d records from the top, want %d", len(got), tc.last)
			}
			if tc.matched {
				tail := readAll(t, l, at.Seq)
				if uint64(len(tail)) != tc.last-at.Seq || (len(tail) > 0 && tail[0].Seq != at.Seq+1) {
					t.Errorf("read %d records after the checkpoint, want %d from seq %d", len(tail), tc.last-at.Seq, at.Seq+1)
				}
				// Appending after a checkpointed open continues the sequence.
				r, err := l.Append(context.Background(), "k", "", nil)
				if err != nil || r.Seq != tc.last+1 {
					t.Errorf("append after the checkpoint: seq %d, %v; want %d", r.Seq, err, tc.last+1)
				}
			}
		})
	}
}

func appendBytes(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
