package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
)

// longAnswer is an answer of n numbered paragraphs with a code block and a
// table in the middle, and a last line that must not be lost.
func longAnswer(n int) string {
	var b strings.Builder
	b.WriteString("# Long answer\n\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "PARA%03d the quick brown fox jumps over the lazy dog, paragraph %d.\n\n", i, i)
		if i == n/3 {
			b.WriteString("```go\nfunc main() {\n\tfmt.Println(\"CODELINE\")\n}\n```\n\n")
		}
		if i == 2*n/3 {
			b.WriteString("| col | value |\n|---|---|\n| TABROW1 | x |\n| TABROW2 | y |\n\n")
		}
	}
	b.WriteString("LASTLINE the conclusion.")
	return b.String()
}

func answerReply(text string, chunk int, delay time.Duration) scripted.Reply {
	args, _ := json.Marshal(map[string]string{"text": text})
	return scripted.Reply{Content: `{"headline":"Writing at length","tool_name":"response","tool_args":` + string(args) + `}`, ChunkSize: chunk, Delay: delay}
}

// markers returns the markers of s in order of appearance (each occurrence).
func markers(s string, names ...string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for _, n := range names {
			if strings.Contains(line, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// TestLongAnswerPrintedOnce: an answer three screens long, at several
// widths and with a resize in the middle of it, is printed above the live
// area paragraph by paragraph, every line once and in order, its last line
// too; the live area stays under half the screen (so a print always has
// room above it) and holds no spinner once the turn is over.
func TestLongAnswerPrintedOnce(t *testing.T) {
	tests := []struct {
		name          string
		width, resize int
	}{
		{"80 columns", 80, 0},
		{"120 columns", 120, 0},
		{"resized from 120 to 70 mid-answer", 120, 70},
	}
	const paras = 45 // three screens of 30 rows
	var names []string
	for i := 1; i <= paras; i++ {
		names = append(names, fmt.Sprintf("PARA%03d", i))
	}
	names = append(names, "CODELINE", "TABROW1", "TABROW2", "LASTLINE")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			eng, _ := e.engine(t, "long", answerReply(longAnswer(paras), 24, 3*time.Millisecond))
			u := start(t, eng)
			u.tm.Send(tea.WindowSizeMsg{Width: tc.width, Height: 30})
			u.submit("write at length")
			u.waitFor("part of the answer printed", func(m *Model) bool { return strings.Contains(m.Printed(), "PARA005") })
			tallest := 0
			resized := false
			for {
				var running bool
				var h int
				var printed string
				u.inspect(func(m *Model) {
					running = m.turn != nil
					h = strings.Count(m.View().Content, "\n") + 1
					printed = m.Printed()
				})
				if running {
					tallest = max(tallest, h)
				}
				if tc.resize > 0 && !resized && strings.Contains(printed, "PARA020") {
					u.tm.Send(tea.WindowSizeMsg{Width: tc.resize, Height: 30})
					resized = true
				}
				if !running {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			u.idle()
			u.waitPrinted("LASTLINE")
			p := u.printed()
			got, want := markers(p, names...), markers(longAnswer(paras), names...)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("printed markers, in order:\n%v\nwant each once:\n%v\nprinted:\n%s", got, want, p)
			}
			if strings.Count(p, "Writing at length") != 1 {
				t.Errorf("the headline is printed %d times", strings.Count(p, "Writing at length"))
			}
			if tallest > 30/2+5 {
				t.Errorf("the live area grew to %d lines of a 30-line screen", tallest)
			}
			v := u.view()
			for _, stale := range []string{"Writing…", "Thinking…", "esc or ctrl+c stops", "PARA0"} {
				if strings.Contains(v, stale) {
					t.Errorf("the live area still shows %q after the turn:\n%s", stale, v)
				}
			}
			if tc.resize > 0 {
				var w int
				u.inspect(func(m *Model) { w = m.width })
				for _, l := range strings.Split(p, "\n") {
					if lw := len([]rune(l)); lw > w {
						t.Errorf("a printed line is %d wide after the resize to %d: %q", lw, w, l)
						break
					}
				}
			}
		})
	}
}

// TestPrintLeavesTheLiveAreaRoom: a print goes out in pieces no taller than
// what the screen leaves above the tallest recent live area.
func TestPrintLeavesTheLiveAreaRoom(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "room")
	m, err := New(context.Background(), eng)
	if err != nil {
		t.Fatal(err)
	}
	m.resize(80, 24)
	m.framed = true // the first frame is drawn
	m.noteFrame(12)
	var lines []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	m.print(strings.Join(lines, "\n"))
	cmd := m.flush()
	if cmd == nil || !m.printing {
		t.Fatal("nothing printed")
	}
	// Pieces of 24-12-2 = 10 lines: 5 prints and the acknowledgement.
	if step := m.height - m.frameHigh() - 2; step != 10 {
		t.Fatalf("piece of %d lines", step)
	}
}

// TestResumeShowsWhatWasShown: a session whose process ended in the middle
// of an answer (its files copied at that moment, as a kill -9 leaves them)
// resumes with the tool call expandable, the headline, an @file prompt as
// typed, and the part of the answer that had streamed.
func TestResumeShowsWhatWasShown(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("NOTESFILE body\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	partial := "FIRSTPARA streamed before the end.\n\nSECONDPARA streamed too.\n\n" + strings.Repeat("tail words ", 300)
	eng, _ := e.engine(t, "crash",
		reply("Looking at the notes", "shell_echo", `{"cmd":"cat notes.txt"}`),
		answerReply(partial, 6, 15*time.Millisecond))
	eng.SetMode(loop.ApprovalYolo)
	u := start(t, eng)
	u.submit("summarise @notes.txt")
	u.waitPrinted("FIRSTPARA", "SECONDPARA")
	sess := eng.Session().Path()
	// What a kill -9 leaves: the files as they are now.
	home2 := t.TempDir()
	e2 := env{home: home2, plugins: e.plugins, work: e.work}
	if err := os.MkdirAll(filepath.Join(home2, "sessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{sess, shownPath(sess)} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := os.WriteFile(filepath.Join(home2, "sessions", filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eng2, _ := e2.engine(t, "crash")
	u2 := start(t, eng2)
	u2.waitPrinted("resumed: 1 turn", "› summarise @notes.txt", "(with notes.txt", "● Looking at the notes",
		"⚙ shell_echo", "cmd=cat notes.txt", "⎿ ran: cat notes.txt", "/expand 1",
		"FIRSTPARA", "SECONDPARA", "the process ended before the answer was complete")
	if p := u2.printed(); strings.Contains(p, "NOTESFILE") || strings.Contains(p, "(no answer)") || strings.Contains(p, "(1 tool call)") {
		t.Fatalf("the resumed screen shows the file's text or an empty answer:\n%s", p)
	}
	u2.submit("/expand 1")
	u2.waitPrinted("tool call 1 · shell_echo", "arguments", `"cmd": "cat notes.txt"`, "second line", "third line")
}

// TestStatusLineIsLive: context fill and speed change while the answer
// streams, not only when the turn ends.
func TestStatusLineIsLive(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "live", answer("short first"), answerReply(strings.Repeat("many words here ", 120), 4, 10*time.Millisecond))
	u := start(t, eng)
	u.submit("one")
	u.idle()
	var fill0 float64
	u.inspect(func(m *Model) { fill0 = m.lastCtx })
	if fill0 <= 0 {
		t.Fatalf("no context fill after a call: %v", fill0)
	}
	u.submit("two")
	u.waitFor("a live estimate while streaming", func(m *Model) bool {
		return m.turn != nil && m.turn.chunks > 20 && m.lastCtx > fill0 && strings.Contains(m.statusLine(), "tok/s")
	})
	var status string
	u.inspect(func(m *Model) { status = plain(m.statusLine()) })
	if strings.Contains(status, "ctx 0%") {
		t.Fatalf("status line during the turn: %s", status)
	}
	u.idle()
}

// TestApprovalDialogWrapsNeverCuts: at 60 columns a long command and its
// reason are shown whole, wrapped; ctrl+c in the dialog denies and prints
// no extension failure.
func TestApprovalDialogWrapsNeverCuts(t *testing.T) {
	e := newEnv(t)
	path := "/home/operator/projects/exocortex/some/deeply/nested/directory/with/a/very/long/name/file-to-remove.txt"
	eng, _ := e.engine(t, "wrap", reply("Removing", "shell_echo", `{"cmd":"rm -f `+path+`"}`), answer("done"))
	u := start(t, eng)
	u.tm.Send(tea.WindowSizeMsg{Width: 60, Height: 30})
	u.submit("remove it")
	u.waitFor("the approval dialog", func(m *Model) bool { return len(m.dialogs) > 0 })
	v := u.view()
	// Join the dialog's lines without their border and indentation.
	var joined strings.Builder
	for _, l := range strings.Split(v, "\n") {
		l = strings.Trim(l, "│ ")
		joined.WriteString(l)
	}
	if !strings.Contains(joined.String(), "rm -f "+path) {
		t.Fatalf("the command is not whole in the dialog:\n%s", v)
	}
	if !strings.Contains(joined.String(), "shell commands need the operator") || strings.Contains(v, "…") {
		t.Fatalf("the reason is cut:\n%s", v)
	}
	for _, l := range strings.Split(v, "\n") {
		if w := len([]rune(l)); w > 60 {
			t.Fatalf("a dialog line is %d wide at 60 columns: %q", w, l)
		}
	}
	u.key(ctrlC)
	u.idle()
	u.waitPrinted("✗ deny")
	if p := u.printed(); strings.Contains(p, "failed at") || strings.Contains(p, "was skipped") {
		t.Fatalf("ctrl+c in the dialog printed an extension failure:\n%s", p)
	}
}

// TestNoticeShowsItsFirstLine: a long notice (epistemic_integrity's) prints
// one line; /details prints the rest.
func TestNoticeShowsItsFirstLine(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "notice")
	u := start(t, eng)
	u.inspect(func(m *Model) {
		m.notice1("epistemic_integrity: 2 of 3 claims have no tool output behind them (12 ms, 3 GB)\n- \"It took 12 ms.\" (DETAILONE)\n- \"It used 3 GB.\" (DETAILTWO)")
	})
	u.waitPrinted("epistemic_integrity: 2 of 3 claims", "+2 lines", "/details 1")
	if strings.Contains(u.printed(), "DETAILONE") {
		t.Fatal("the details were printed at once")
	}
	u.submit("/details")
	u.waitPrinted("notice 1", "DETAILONE", "DETAILTWO")
}

// TestSmallerThings: /clear and ctrl+l clear the screen, a stale hint goes,
// /help fits the screen, ctrl+d says goodbye with the session's name.
func TestSmallerThings(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "small", answer("an answer"))
	u := start(t, eng)
	u.tm.Send(tea.WindowSizeMsg{Width: 80, Height: 40})

	u.submit("/help")
	u.waitPrinted("/help all: every command")
	var helpLines int
	u.inspect(func(m *Model) { helpLines = strings.Count(m.help(""), "\n") + 1 })
	if helpLines > 40-8 {
		t.Errorf("/help is %d lines on a 40-line screen", helpLines)
	}
	u.submit("/help all")
	u.waitPrinted("/export json FILE", "search the history")

	// The hint of a first ctrl+c goes once something else is typed.
	u.key(ctrlC)
	if v := u.view(); !strings.Contains(v, "ctrl+c again") {
		t.Fatalf("no hint: %s", v)
	}
	u.typeText("x")
	if v := u.view(); strings.Contains(v, "ctrl+c again") {
		t.Fatalf("the hint stayed after typing:\n%s", v)
	}
	u.key(ctrlC)

	u.submit("/clear")
	u.waitFor("the screen cleared", func(m *Model) bool { return !strings.Contains(m.Printed(), "/help") })
	u.key(tea.KeyPressMsg{Code: 'l', Mod: tea.ModCtrl})
	u.waitFor("ctrl+l handled", func(m *Model) bool { return m.clearReq == "" && !m.printing })

	u.key(ctrlD)
	u.tm.WaitFinished(t, teatestTimeout())
	out, _ := io.ReadAll(u.tm.FinalOutput(t))
	if !bytes.Contains(out, []byte("small")) || !bytes.Contains(out, []byte("exocortex --resume")) {
		t.Fatalf("no goodbye line naming the session; the output ends:\n%q", tail(string(out), 600))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestMemoryInsideASession: while another process owns the memory store (the
// session's memory service), /memory stats counts its records, /memory search
// shows ranks and why, and /memory add writes, all through the service: no
// copy of the journal, and the owner sees the terminal's write.
func TestMemoryInsideASession(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "mem")
	held, err := service.Connect(context.Background(), service.Config{Dir: filepath.Join(e.home, "memory"),
		Options: memory.Options{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	owner := service.Remote{C: held}
	for _, text := range []string{"the sky is blue", "grass is green", "the sea is blue too"} {
		if _, err := owner.Put(context.Background(), memory.Input{Text: text}, memory.Source{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	u := start(t, eng)
	u.submit("/memory stats")
	u.waitPrinted("records   3")
	u.submit("/memory search blue")
	u.waitPrinted("1. ", "why: BM25 rank 1", "2. ", "BM25 rank 2")
	u.submit("/memory add the terminal notes violet")
	u.waitPrinted("saved memory")
	res, err := owner.Search(context.Background(), "violet", memory.SearchOptions{})
	if err != nil || len(res.Hits) != 1 || !held.Owner() {
		t.Fatalf("the owner's search for the terminal's write: %+v, %v (owner %v)", res.Hits, err, held.Owner())
	}
	if matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "exocortex-memory-snapshot-*")); len(matches) > 0 {
		t.Fatalf("a copy of the journal was made: %v", matches)
	}
}

// TestWelcomeCardModelPresent: the model the server lists is ✓; hasModel
// matches names with and without their tag.
func TestWelcomeCardModelPresent(t *testing.T) {
	tests := []struct {
		list  []string
		model string
		want  bool
	}{
		{[]string{"qwen3:latest"}, "qwen3", true},
		{[]string{"qwen3:8b"}, "qwen3", false},
		{[]string{"qwen3:8b", "llama3.2:latest"}, "llama3.2:latest", true},
		{nil, "qwen3", false},
	}
	for _, tt := range tests {
		if got := hasModel(tt.list, tt.model); got != tt.want {
			t.Errorf("hasModel(%v, %q) = %v", tt.list, tt.model, got)
		}
	}
}

func TestLineModeSeparatesAnswers(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "sep", answer("ANSWER ONE"), answer("ANSWER TWO"))
	var out, errOut bytes.Buffer
	if err := LineMode(context.Background(), eng, strings.NewReader("one\ntwo\n"), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if want := "ANSWER ONE\n\n---\n\nANSWER TWO\n"; out.String() != want {
		t.Fatalf("stdout %q, want %q", out.String(), want)
	}
}
