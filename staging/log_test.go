package staging

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func openT(t *testing.T, path string, opts Options) *Log {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet()
	}
	l, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func readAll(t *testing.T, l *Log, since uint64) []Record {
	t.Helper()
	var out []Record
	if err := l.Read(context.Background(), since, func(r Record) error { out = append(out, r); return nil }); err != nil {
		t.Fatalf("Read(since %d): %v", since, err)
	}
	return out
}

func copyFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "staging.jsonl")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAppendReadReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "staging.jsonl")
	fixed := time.Date(2026, 11, 21, 12, 0, 0, 123, time.UTC)
	l := openT(t, path, Options{Now: func() time.Time { return fixed }})
	r, err := l.Append(ctx, "note", "sess-1", map[string]string{"text": "a <b> & c"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Seq != 1 || r.Kind != "note" || r.Session != "sess-1" || !r.TS.Equal(fixed) {
		t.Fatalf("Append returned %+v", r)
	}
	if _, err := l.AppendBatch(ctx, []Entry{{Kind: "artifact", Payload: json.RawMessage(`{ "path" : "/x" }`)}, {Kind: "note"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendBatch(ctx, []Entry{{Kind: ""}}); err == nil {
		t.Fatal("an entry without kind was accepted")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	want := `{"v":1,"seq":1,"ts":"2026-11-21T12:00:00.000000123Z","kind":"note","session":"sess-1","payload":{"text":"a <b> & c"}}
{"v":1,"seq":2,"ts":"2026-11-21T12:00:00.000000123Z","kind":"artifact","payload":{"path":"/x"}}
{"v":1,"seq":3,"ts":"2026-11-21T12:00:00.000000123Z","kind":"note","payload":{}}
`
	if string(raw) != want {
		t.Fatalf("file content:\n%s\nwant:\n%s", raw, want)
	}
	l = openT(t, path, Options{})
	if l.Recovery().Repaired() {
		t.Fatalf("clean file reported a repair: %s", l.Recovery())
	}
	if l.LastSeq() != 3 {
		t.Fatalf("LastSeq after reopen = %d, want 3", l.LastSeq())
	}
	got := readAll(t, l, 1)
	if len(got) != 2 || got[0].Seq != 2 || got[1].Seq != 3 {
		t.Fatalf("Read(since 1) = %+v", got)
	}
	var p struct{ Path string }
	if err := got[0].Decode(&p); err != nil || p.Path != "/x" {
		t.Fatalf("Decode: %v %+v", err, p)
	}
	r4, err := l.Append(ctx, "note", "", nil)
	if err != nil || r4.Seq != 4 {
		t.Fatalf("append after reopen: %+v %v", r4, err)
	}
}

func TestReadSinceUsesSparseIndex(t *testing.T) {
	ctx := context.Background()
	l := openT(t, filepath.Join(t.TempDir(), "j.jsonl"), Options{Sync: SyncOS})
	const n = 3*indexEvery + 17
	batch := make([]Entry, 0, 1000)
	for i := 1; i <= n; i++ {
		batch = append(batch, Entry{Kind: "k", Payload: map[string]int{"i": i}})
		if len(batch) == cap(batch) || i == n {
			if _, err := l.AppendBatch(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	for _, since := range []uint64{0, 1, indexEvery - 1, indexEvery, indexEvery + 1, 2*indexEvery + 5, n - 1, n, n + 10} {
		got := readAll(t, l, since)
		wantLen := 0
		if since < n {
			wantLen = int(n - since)
		}
		if len(got) != wantLen {
			t.Fatalf("since %d: %d records, want %d", since, len(got), wantLen)
		}
		if wantLen > 0 && got[0].Seq != since+1 {
			t.Fatalf("since %d: first seq %d", since, got[0].Seq)
		}
	}
	// The same through a reopened log, whose index comes from the scan.
	l.Close()
	l2 := openT(t, l.Path(), Options{})
	if got := readAll(t, l2, 2*indexEvery+5); len(got) != n-(2*indexEvery+5) || got[0].Seq != 2*indexEvery+6 {
		t.Fatalf("after reopen: %d records, first %+v", len(got), got[0])
	}
}

func TestTornTailIsCutAndReported(t *testing.T) {
	path := copyFixture(t, "torn.jsonl")
	before, _ := os.ReadFile(path)
	l := openT(t, path, Options{})
	rec := l.Recovery()
	if rec.TornTail == nil || rec.TornTail.Line != 3 || len(rec.Quarantined) != 0 {
		t.Fatalf("Recovery = %s", rec)
	}
	if !strings.Contains(rec.String(), path+":3") {
		t.Fatalf("Recovery.String() does not name file and line: %s", rec)
	}
	after, _ := os.ReadFile(path)
	cut := bytes.LastIndexByte(before, '\n') + 1
	if string(after) != string(before[:cut]) {
		t.Fatalf("file after open:\n%s", after)
	}
	q := readQuarantine(t, path+".quarantine")
	if len(q) != 1 || q[0].Line != 3 || q[0].Text != string(before[cut:]) {
		t.Fatalf("quarantine = %+v", q)
	}
	r, err := l.Append(context.Background(), "note", "", nil)
	if err != nil || r.Seq != 3 {
		t.Fatalf("append after cut: %+v %v", r, err)
	}
	if got := readAll(t, l, 0); len(got) != 3 {
		t.Fatalf("%d records after repair", len(got))
	}
}

func readQuarantine(t *testing.T, path string) []quarantineLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []quarantineLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q quarantineLine
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatalf("quarantine line %q: %v", sc.Text(), err)
		}
		out = append(out, q)
	}
	return out
}

func TestMalformedLinesAreQuarantined(t *testing.T) {
	path := copyFixture(t, "garbage.jsonl")
	original, _ := os.ReadFile(path)
	origLines := strings.Split(string(original), "\n")

	// A lock-free reader skips and reports the bad lines before any repair.
	var scanned []uint64
	bad, err := Scan(context.Background(), path, 0, func(r Record) error { scanned = append(scanned, r.Seq); return nil })
	if err != nil {
		t.Fatal(err)
	}
	wantSeqs := []uint64{1, 2, 2, 5, 6} // Scan does not judge sequence order
	if fmt.Sprint(scanned) != fmt.Sprint(wantSeqs) {
		t.Fatalf("Scan read seqs %v, want %v", scanned, wantSeqs)
	}
	if len(bad) != 5 {
		t.Fatalf("Scan reported %d bad lines: %v", len(bad), bad)
	}

	l := openT(t, path, Options{})
	rec := l.Recovery()
	want := []struct {
		line   int
		reason string
	}{
		{2, "not a JSON record"},
		{4, "not a JSON record"},
		{5, "empty line"},
		{6, "sequence 2 does not follow 2"},
		{7, `missing "kind"`},
		{8, `missing schema version`},
	}
	if rec.TornTail != nil || len(rec.Quarantined) != len(want) {
		t.Fatalf("Recovery = %s", rec)
	}
	q := readQuarantine(t, path+".quarantine")
	for i, w := range want {
		b := rec.Quarantined[i]
		if b.Line != w.line || !strings.Contains(b.Reason, w.reason) || b.File != path {
			t.Errorf("quarantined[%d] = %s, want line %d %q", i, b, w.line, w.reason)
		}
		text := q[i].Text
		if q[i].TextBase64 != nil {
			text = string(q[i].TextBase64)
		}
		if q[i].Line != w.line || text != origLines[w.line-1] {
			t.Errorf("quarantine file entry %d = line %d %q, want line %d %q", i, q[i].Line, text, w.line, origLines[w.line-1])
		}
	}
	got := readAll(t, l, 0)
	var seqs []uint64
	for _, r := range got {
		seqs = append(seqs, r.Seq)
	}
	if fmt.Sprint(seqs) != "[1 2 5 6]" {
		t.Fatalf("records after repair: %v", seqs)
	}
	if r, err := l.Append(context.Background(), "note", "", nil); err != nil || r.Seq != 7 {
		t.Fatalf("append after repair: %+v %v", r, err)
	}
	l.Close()
	l2 := openT(t, path, Options{})
	if l2.Recovery().Repaired() {
		t.Fatalf("second open repaired again: %s", l2.Recovery())
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte(`{"v":9,"seq":1,"ts":"2026-01-02T03:04:05Z","kind":"note","payload":{}}`+"\n"), 0o600)
	_, err := Open(context.Background(), path, Options{Logger: quiet()})
	if !errors.Is(err, ErrNewerVersion) || !strings.Contains(err.Error(), path+":1") {
		t.Fatalf("Open = %v, want ErrNewerVersion naming %s:1", err, path)
	}
	if _, err := os.Stat(path + ".quarantine"); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a newer record was quarantined instead of refused")
	}
}

func TestSecondWriterInProcessIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	l := openT(t, path, Options{})
	_, err := Open(context.Background(), path, Options{Logger: quiet()})
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second Open = %v, want *LockedError", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) || !strings.Contains(err.Error(), path) {
		t.Fatalf("lock error does not name the holder and file: %v", err)
	}
	l.Close()
	l2 := openT(t, path, Options{})
	if _, err := l2.Append(context.Background(), "note", "", nil); err != nil {
		t.Fatal(err)
	}
}

// The helper process for TestSecondWriterProcess: it opens the log, appends, says
// "ready" and waits for stdin to close.
func TestHelperHoldLock(t *testing.T) {
	path := os.Getenv("STAGING_HELPER_HOLD")
	if path == "" {
		t.Skip("helper process only")
	}
	l, err := Open(context.Background(), path, Options{Logger: quiet()})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	if _, err := l.Append(context.Background(), "note", "child", nil); err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	l.Close()
	os.Exit(0)
}

func TestSecondWriterProcessIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldLock$")
	cmd.Env = append(os.Environ(), "STAGING_HELPER_HOLD="+path)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("helper said %q", line)
	}
	_, err := Open(context.Background(), path, Options{Logger: quiet()})
	var le *LockedError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", cmd.Process.Pid)) {
		t.Fatalf("Open while another process writes = %v", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	l := openT(t, path, Options{})
	if r, err := l.Append(context.Background(), "note", "", nil); err != nil || r.Seq != 2 {
		t.Fatalf("append after the other writer left: %+v %v", r, err)
	}
}

func TestConcurrentAppendsNeverInterleave(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	l := openT(t, path, Options{Sync: SyncOS})
	big := strings.Repeat("x", 70_000) // larger than a pipe buffer or a page
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := l.Append(ctx, "note", fmt.Sprint(g), map[string]string{"text": big[:g*1000+i]}); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	// Readers run alongside the writers.
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				var last uint64
				l.Read(ctx, 0, func(rec Record) error {
					if rec.Seq != last+1 {
						t.Errorf("read seq %d after %d", rec.Seq, last)
					}
					last = rec.Seq
					return nil
				})
			}
		}()
	}
	wg.Wait()
	l.Close()
	l2 := openT(t, path, Options{})
	if l2.Recovery().Repaired() || l2.LastSeq() != 400 {
		t.Fatalf("after concurrent appends: recovery %s, last seq %d", l2.Recovery(), l2.LastSeq())
	}
}

func TestFailedWriteLeavesNoPartialLine(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	l := openT(t, path, Options{})
	if _, err := l.Append(ctx, "note", "", map[string]string{"text": "kept"}); err != nil {
		t.Fatal(err)
	}
	sizeBefore := l.Size()
	// The disk fills after half of the next write reached the file.
	l.write = func(f *os.File, b []byte) (int, error) {
		n, _ := f.Write(b[:len(b)/2])
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	_, err := l.Append(ctx, "note", "", map[string]string{"text": strings.Repeat("y", 500)})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("append on a full disk = %v", err)
	}
	if st, _ := os.Stat(path); st.Size() != sizeBefore {
		t.Fatalf("file is %d bytes after the failed write, want %d", st.Size(), sizeBefore)
	}
	l.write = (*os.File).Write
	r, err := l.Append(ctx, "note", "", nil)
	if err != nil || r.Seq != 2 {
		t.Fatalf("append after the disk recovered: %+v %v", r, err)
	}
	l.Close()
	l2 := openT(t, path, Options{})
	if l2.Recovery().Repaired() || l2.LastSeq() != 2 {
		t.Fatalf("reopen: %s, last %d", l2.Recovery(), l2.LastSeq())
	}
}

// TestFullDisk fills a real 64 KiB tmpfs. It needs mount privileges and skips
// without them.
func TestFullDisk(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (%v: %s)", err, bytes.TrimSpace(out))
	}
	defer exec.Command("umount", dir).Run()
	ctx := context.Background()
	path := filepath.Join(dir, "staging.jsonl")
	l, err := Open(ctx, path, Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	text := strings.Repeat("z", 3000)
	var full error
	for i := 0; i < 100 && full == nil; i++ {
		_, full = l.Append(ctx, "note", "", map[string]string{"text": text})
	}
	if !errors.Is(full, syscall.ENOSPC) || !strings.Contains(full.Error(), path) {
		t.Fatalf("filling the disk gave %v", full)
	}
	last := l.LastSeq()
	l.Close()
	raw, _ := os.ReadFile(path)
	if len(raw) == 0 || raw[len(raw)-1] != '\n' {
		t.Fatal("the log ends with a partial line")
	}
	os.Remove(path + ".lock") // room for the lock file's contents is not the point
	l2, err := Open(ctx, path, Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if l2.Recovery().Repaired() || l2.LastSeq() != last {
		t.Fatalf("reopen after full disk: %s, last %d want %d", l2.Recovery(), l2.LastSeq(), last)
	}
}

func TestScanFollowsAWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	l := openT(t, path, Options{Sync: SyncOS})
	var since uint64
	total := 0
	for round := 0; round < 5; round++ {
		for i := 0; i < 10; i++ {
			if _, err := l.Append(ctx, "note", "", map[string]int{"round": round}); err != nil {
				t.Fatal(err)
			}
		}
		// A write in progress: a partial line that Scan must not read.
		bad, err := Scan(ctx, path, since, func(r Record) error {
			if r.Seq != since+1 {
				t.Fatalf("Scan gave seq %d after %d", r.Seq, since)
			}
			since = r.Seq
			total++
			return nil
		})
		if err != nil || len(bad) != 0 {
			t.Fatalf("Scan: %v %v", bad, err)
		}
	}
	if total != 50 {
		t.Fatalf("Scan read %d records, want 50", total)
	}
	if bad, err := Scan(ctx, filepath.Join(t.TempDir(), "none.jsonl"), 0, func(Record) error { return nil }); err != nil || bad != nil {
		t.Fatalf("Scan of a missing file: %v %v", bad, err)
	}
	stop := errors.New("stop")
	if _, err := Scan(ctx, path, 0, func(Record) error { return stop }); err != stop {
		t.Fatalf("fn's error was not returned: %v", err)
	}
}

func TestScanSkipsPartialLine(t *testing.T) {
	path := copyFixture(t, "torn.jsonl")
	n := 0
	bad, err := Scan(context.Background(), path, 0, func(Record) error { n++; return nil })
	if err != nil || len(bad) != 0 || n != 2 {
		t.Fatalf("Scan of a torn file: %d records, bad %v, %v", n, bad, err)
	}
}

func TestSyncPolicies(t *testing.T) {
	for _, s := range []string{"every-append", "interval", "os"} {
		p, err := ParseSyncPolicy(s)
		if err != nil || p.String() != s {
			t.Fatalf("ParseSyncPolicy(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := ParseSyncPolicy("sometimes"); err == nil {
		t.Fatal("unknown policy accepted")
	}
	l := openT(t, filepath.Join(t.TempDir(), "s.jsonl"), Options{Sync: SyncInterval, SyncInterval: 5 * time.Millisecond})
	if _, err := l.Append(context.Background(), "note", "", nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		dirty := l.dirty
		l.mu.Unlock()
		if !dirty {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background sync never ran")
		}
		time.Sleep(time.Millisecond)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := l.Append(context.Background(), "note", "", nil); err == nil {
		t.Fatal("append after Close succeeded")
	}
}

// TestWrongSequenceIsQuarantinedAlone damages one line's seq in a 200-record log in
// each way a stray edit or a bad copy can, and checks that only that line leaves the
// log, the records after it stay, and new appends continue from the true last seq.
func TestWrongSequenceIsQuarantinedAlone(t *testing.T) {
	setSeq := func(lines []string, i int, seq uint64) {
		n, ok := quickSeq([]byte(lines[i]))
		if !ok {
			t.Fatalf("line %d has no seq", i+1)
		}
		lines[i] = strings.Replace(lines[i], fmt.Sprintf(`"seq":%d,`, n), fmt.Sprintf(`"seq":%d,`, seq), 1)
	}
	cases := []struct {
		name     string
		damage   func(lines []string) []string
		kept     int
		badLine  int
		reason   string
		lastSeq  uint64
		missing  uint64 // a seq that must no longer be in the log (0: none)
		extraSeq uint64 // the seq the next append gets
	}{
		{"jump ahead", func(l []string) []string { setSeq(l, 49, 9999); return l }, 199, 50, "jumps ahead", 200, 9999, 201},
		{"repeat of the line before", func(l []string) []string { setSeq(l, 49, 49); return l }, 199, 50, "does not follow 49", 200, 50, 201},
		{"repeat of the line after", func(l []string) []string { setSeq(l, 49, 51); return l }, 199, 50, "jumps ahead", 200, 50, 201},
		{"far lower", func(l []string) []string { setSeq(l, 49, 7); return l }, 199, 50, "does not follow 49", 200, 50, 201},
		{"whole line written twice", func(l []string) []string {
			return append(l[:50], append([]string{l[49]}, l[50:]...)...)
		}, 200, 51, "repeats line 50", 200, 0, 201},
		{"first line jumps", func(l []string) []string { setSeq(l, 0, 5000); return l }, 199, 1, "jumps ahead", 200, 1, 201},
		{"last line repeated", func(l []string) []string { return append(l, l[199]) }, 200, 201, "repeats line 200", 200, 0, 201},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "journal.jsonl")
			l := openT(t, path, Options{Sync: SyncOS})
			for i := 0; i < 200; i++ {
				if _, err := l.Append(ctx, "note", "", map[string]int{"n": i + 1}); err != nil {
					t.Fatal(err)
				}
			}
			l.Close()
			b, _ := os.ReadFile(path)
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			lines = tc.damage(lines)
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}

			l2 := openT(t, path, Options{})
			rec := l2.Recovery()
			if len(rec.Quarantined) != 1 || rec.Quarantined[0].Line != tc.badLine || !strings.Contains(rec.Quarantined[0].Reason, tc.reason) {
				t.Fatalf("Recovery = %s, want line %d alone (%q)", rec, tc.badLine, tc.reason)
			}
			got := readAll(t, l2, 0)
			if len(got) != tc.kept {
				t.Fatalf("kept %d records, want %d", len(got), tc.kept)
			}
			for _, r := range got {
				if tc.missing != 0 && r.Seq == tc.missing {
					t.Errorf("seq %d is still in the log", tc.missing)
				}
			}
			if l2.LastSeq() != tc.lastSeq {
				t.Fatalf("LastSeq = %d, want %d", l2.LastSeq(), tc.lastSeq)
			}
			r, err := l2.Append(ctx, "note", "", nil)
			if err != nil || r.Seq != tc.extraSeq {
				t.Fatalf("append after repair = seq %d (%v), want %d", r.Seq, err, tc.extraSeq)
			}
			q := readQuarantine(t, path+".quarantine")
			if len(q) != 1 || q[0].Text != lines[tc.badLine-1] {
				t.Fatalf("quarantine file holds %+v, want line %d as it was", q, tc.badLine)
			}
		})
	}
}
