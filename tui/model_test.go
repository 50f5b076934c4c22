package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/tui/history"
	"github.com/exocortex/exocortex/tui/transcript"
)

func plain(s string) string { return ansi.Strip(s) }

func TestWelcomeAndStreamedAnswer(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "s1", scripted.Reply{
		Content: `{"thoughts":["greet"],"headline":"Answering","tool_name":"response","tool_args":{"text":"Hello, **operator**.\n\n` + "```go\\nfmt.Println(1)\\n```" + `"}}`,
		// Slow enough that the live area shows the answer for a few hundred
		// milliseconds: the harness looks every 15 ms, and a loaded machine may
		// not let it look for a while.
		ChunkSize: 5, Delay: 25 * time.Millisecond,
	})
	u := start(t, eng)
	p := u.printed()
	for _, want := range []string{"Exocortex", "new session s1", "model    scripted", "✓ answered", "✓ gate", "memory   empty", "ctrl+d quit"} {
		if !strings.Contains(p, want) {
			t.Errorf("the welcome card lacks %q:\n%s", want, p)
		}
	}
	if v := u.view(); !strings.Contains(v, "plugins 1/1") || !strings.Contains(v, "scripted") || !strings.Contains(v, "s1") {
		t.Errorf("status line: %s", v)
	}
	u.submit("say hello")
	// While it streams, the live area shows the answer growing.
	u.waitFor("the streamed answer in the live area", func(m *Model) bool {
		return m.turn != nil && strings.Contains(plain(m.View().Content), "Hello")
	})
	u.idle()
	u.waitPrinted("› say hello", "Hello, operator.", "fmt.Println(1)")
	if v := u.view(); !strings.Contains(v, "tok/s") || !strings.Contains(v, "ctx ") {
		t.Errorf("status line after a reply lacks speed or fill: %s", v)
	}
	// Saved as it went: the session file has the prompt and the reply.
	hist := eng.Session().History()
	if len(hist) < 2 || hist[0].GetContent() != "say hello" {
		t.Fatalf("history = %v", hist)
	}
}

func TestHistoryUpDownAcrossRuns(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "h1", answer("one"), answer("two"))
	u := start(t, eng)
	u.submit("first prompt")
	u.idle()
	u.typeText("second")
	u.key(ctrlJ) // a new line inside the prompt
	u.typeText("line")
	u.key(enter)
	u.idle()
	u.typeText("draft")
	u.key(up)
	if got := u.input(); got != "second\nline" {
		t.Fatalf("Up gave %q", got)
	}
	// On the first line of a multi-line entry Up goes further back.
	u.key(up)
	u.key(up)
	if got := u.input(); got != "first prompt" {
		t.Fatalf("Up Up gave %q", got)
	}
	u.key(down)
	u.key(down)
	u.key(down)
	if got := u.input(); got != "draft" {
		t.Fatalf("Down past the newest gave %q, want the draft back", got)
	}
	// The history is on disk for the next run.
	h, err := history.Open(filepath.Join(e.home, "history.jsonl"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Entries(); len(got) != 2 || got[1] != "second\nline" {
		t.Fatalf("history file = %q", got)
	}
}

func TestReverseSearch(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.home, "history.jsonl"), []byte(`"git status"`+"\n"+`"make test"`+"\n"+`"git log"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eng, _ := e.engine(t, "r1")
	u := start(t, eng)
	u.key(ctrlR)
	u.typeText("git")
	if v := u.view(); !strings.Contains(v, "(reverse search) git") || !strings.Contains(v, "git log") {
		t.Fatalf("search line: %s", v)
	}
	u.key(ctrlR) // older match
	if v := u.view(); !strings.Contains(v, "git status") {
		t.Fatalf("second match: %s", v)
	}
	u.key(enter)
	if got := u.input(); got != "git status" {
		t.Fatalf("accepted %q", got)
	}
	// Esc leaves the input as it was before the search.
	u.key(ctrlR)
	u.typeText("zzz")
	if v := u.view(); !strings.Contains(v, "no match") {
		t.Fatalf("no match not shown: %s", v)
	}
	u.key(esc)
	if got := u.input(); got != "git status" {
		t.Fatalf("after esc %q", got)
	}
}

func TestCompletionMenu(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "c1")
	u := start(t, eng)
	u.typeText("/me")
	if v := u.view(); !strings.Contains(v, "/memory") || !strings.Contains(v, "the long-term memory store") {
		t.Fatalf("menu: %s", v)
	}
	u.key(tab)
	if got := u.input(); got != "/memory " {
		t.Fatalf("tab completed to %q", got)
	}
	if v := u.view(); !strings.Contains(v, "/memory search QUERY") {
		t.Fatalf("subcommand menu: %s", v)
	}
	u.typeText("st")
	u.key(enter) // the only match, runnable: it runs
	u.waitPrinted("/memory stats", "the memory store is empty")
	// A command needing an argument is completed, not run.
	u.typeText("/resu")
	u.key(enter)
	if got := u.input(); got != "/resume " {
		t.Fatalf("enter on /resu gave %q", got)
	}
	for range len("/resume ") {
		u.key(backspace)
	}
	// /he + Enter runs /help at once.
	u.typeText("/he")
	u.key(enter)
	u.waitPrinted("keys", "ctrl+r", "/wiring", "/export", "/help all")
}

// approvalScript calls shell_echo (held by the gate extension), then answers.
func approvalScript(calls int) []scripted.Reply {
	var rs []scripted.Reply
	for i := range calls {
		rs = append(rs, reply("Running it", "shell_echo", `{"cmd":"rm -rf /tmp/x`+strings.Repeat(" ", i)+`"}`))
	}
	return append(rs, answer("done"))
}

func TestApprovalDialog(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		calls   int
		dialogs int
		want    []string
	}{
		{"allow once", "y", 1, 1, []string{"✓ allow once", "ran: rm -rf /tmp/x", "done"}},
		{"deny", "n", 1, 1, []string{"✗ deny", "tool_blocked", "done"}},
		{"deny with the third choice", "3", 1, 1, []string{"✗ deny", "done"}},
		// The same command twice: asked once, then allowed by the memo.
		{"allow for the session", "a", 2, 1, []string{"✓ allow session", "allowed earlier for this session", "done"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			replies := approvalScript(1)
			if tc.calls == 2 {
				replies = []scripted.Reply{
					reply("Running it", "shell_echo", `{"cmd":"rm -rf /tmp/x"}`),
					reply("Again", "shell_echo", `{"cmd":"rm -rf /tmp/x","again":true}`),
					answer("done"),
				}
			}
			eng, _ := e.engine(t, "a1", replies...)
			u := start(t, eng)
			u.submit("clean up")
			asked := 0
			for asked < tc.dialogs {
				u.waitFor("the approval dialog", func(m *Model) bool { return len(m.dialogs) > 0 })
				v := u.view()
				for _, want := range []string{"Approval needed", "shell_echo", "rm -rf /tmp/x", "held by shell_gate", "Allow once", "Allow for this session", "Deny"} {
					if !strings.Contains(v, want) {
						t.Fatalf("dialog lacks %q:\n%s", want, v)
					}
				}
				u.typeText(tc.key)
				asked++
			}
			u.idle()
			u.waitPrinted(tc.want...)
			var left int
			u.inspect(func(m *Model) { left = len(m.dialogs) })
			if left != 0 {
				t.Fatalf("%d dialogs left open", left)
			}
		})
	}
}

func TestCtrlCStopsTheStreamAndTheSessionGoesOn(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("word ", 400)
	eng, _ := e.engine(t, "k1",
		scripted.Reply{Content: `{"headline":"Writing","tool_name":"response","tool_args":{"text":"` + long + `"}}`, ChunkSize: 4, Delay: 20 * time.Millisecond},
		answer("after the stop"))
	u := start(t, eng)
	u.submit("write a lot")
	u.waitFor("streaming", func(m *Model) bool { return m.turn != nil && m.turn.reply.Len() > 100 })
	u.key(ctrlC)
	u.idle()
	u.waitPrinted("stopped (ctrl+c)", "word word")
	u.submit("go on")
	u.idle()
	u.waitPrinted("after the stop")
	if strings.Contains(u.printed(), "press ctrl+c again") {
		t.Error("ctrl+c during a turn offered to quit")
	}
}

func TestCtrlDAndDoubleCtrlC(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "d1")
	u := start(t, eng)
	u.typeText("ab")
	u.key(left)
	u.key(ctrlD) // deletes the character under the cursor, does not quit
	if got := u.input(); got != "a" {
		t.Fatalf("ctrl+d on text gave %q", got)
	}
	u.key(ctrlC) // clears the input
	if got := u.input(); got != "" {
		t.Fatalf("ctrl+c left %q", got)
	}
	u.key(ctrlC)
	if v := u.view(); !strings.Contains(v, "ctrl+c again") {
		t.Fatalf("no hint after the first ctrl+c: %s", v)
	}
	u.key(ctrlD)
	u.tm.WaitFinished(t, teatestTimeout())
}

func TestPasteIsOneMessage(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("pasted line\n", 30)
	eng, srv := e.engine(t, "p1",
		scripted.Reply{Content: answerJSON("small ok"), ExpectContains: "a\nb\nc"},
		scripted.Reply{Content: answerJSON("big ok"), ExpectContains: big})
	u := start(t, eng)
	u.tm.Send(pasteMsg("a\nb\nc"))
	if got := u.input(); got != "a\nb\nc" {
		t.Fatalf("a small paste: %q", got)
	}
	u.key(enter)
	u.idle()
	u.waitPrinted("small ok")
	u.tm.Send(pasteMsg(big))
	if got := u.input(); !strings.Contains(got, "[pasted text #1: 31 lines]") {
		t.Fatalf("a big paste shows %q", got)
	}
	u.key(enter)
	u.idle()
	u.waitPrinted("big ok")
	if f := srv.Failures(); len(f) > 0 {
		t.Fatalf("the model got something else: %v", f)
	}
	var users int
	for _, m := range eng.History() {
		if m.GetRole() == "user" && m.GetSenderId() == "operator" {
			users++
		}
	}
	if users != 2 {
		t.Fatalf("%d operator messages, want 2 (each paste is one message)", users)
	}
}

func answerJSON(text string) string {
	b, _ := json.Marshal(map[string]any{"tool_name": "response", "tool_args": map[string]string{"text": text}})
	return string(b)
}

func TestCohesionLoopOnEmptyPrompt(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "t1",
		answer("hi"),
		scripted.Reply{Content: answerJSON("I am helping an operator who said hi; nothing is open."), ExpectContains: "empty message"})
	u := start(t, eng)
	u.submit("hi")
	u.idle()
	u.key(enter) // empty prompt
	u.idle()
	u.waitPrinted("the agent reflected")
	if strings.Contains(u.printed(), "nothing is open") {
		t.Fatal("the thought was shown")
	}
	u.submit("/thoughts")
	u.waitPrinted("thoughts (1)", "nothing is open")
	// The thought is in the session, marked; the transcript hides the exchange.
	s := eng.Session()
	msgs := s.History()
	turns, thoughts := transcript.Build(msgs)
	if len(turns) != 1 || len(thoughts) != 1 {
		t.Fatalf("%d turns, %d thoughts", len(turns), len(thoughts))
	}
	last := msgs[len(msgs)-1]
	if !transcript.IsThought(last) {
		t.Fatalf("last message %v is not the thought", last)
	}
}

func TestShellEscapeAsksAndAttachesItsOutput(t *testing.T) {
	e := newEnv(t)
	eng, srv := e.engine(t, "x1", scripted.Reply{Content: answerJSON("seen"), ExpectContains: "shell-said-this"})
	u := start(t, eng)
	// A command that writes a file (tier 2) is asked for.
	u.submit("!echo shell-said-this | tee said.txt")
	u.waitFor("the approval dialog", func(m *Model) bool { return len(m.dialogs) > 0 })
	if v := u.view(); !strings.Contains(v, "echo shell-said-this | tee said.txt") {
		t.Fatalf("dialog: %s", v)
	}
	u.typeText("y")
	u.idle()
	u.waitPrinted("shell-said-this", "exit 0", "allowed once")
	u.submit("what did it say?")
	u.idle()
	u.waitPrinted("seen")
	if f := srv.Failures(); len(f) > 0 {
		t.Fatalf("the output did not go with the prompt: %v", f)
	}
	// Yolo runs without asking.
	u.key(shiftTab)
	u.key(shiftTab)
	// The keys go through the program's loop: wait for them.
	u.waitFor("yolo after two shift+tab", func(*Model) bool { return eng.Mode() == loop.ApprovalYolo })
	u.submit("!touch quiet")
	u.idle()
	u.waitPrinted("approval mode yolo")
}

// TestReadOnlyShellEscapeRunsWithoutAsking: the operator's read-only
// command (tier 1, as the agent's ls is) runs at once in the default mode.
func TestReadOnlyShellEscapeRunsWithoutAsking(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "ro")
	u := start(t, eng)
	u.submit("!ls -a")
	u.idle()
	u.waitPrinted("exit 0", "read-only (tier 1")
	var asked bool
	u.inspect(func(m *Model) { asked = len(m.dialogs) > 0 })
	if asked || eng.Mode() != loop.ApprovalDefault {
		t.Fatalf("a read-only command asked (mode %s)", eng.Mode())
	}
}

func TestAtFileIncludesIt(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("the secret is 42"), 0o644); err != nil {
		t.Fatal(err)
	}
	eng, srv := e.engine(t, "f1", scripted.Reply{Content: answerJSON("read it"), ExpectContains: "the secret is 42"})
	u := start(t, eng)
	u.typeText("summarise @not")
	u.key(tab) // completes the path
	if got := u.input(); got != "summarise @notes.txt" {
		t.Fatalf("path completion gave %q", got)
	}
	u.key(enter)
	u.idle()
	u.waitPrinted("read it", "(with notes.txt, 16 B)")
	if f := srv.Failures(); len(f) > 0 {
		t.Fatal(f)
	}
	u.submit("and @missing.txt")
	u.waitPrinted("@missing.txt", "nothing was sent")
}

func TestSlashCommands(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "w1", reply("Echo", "shell_echo", `{"cmd":"ls"}`), answer("ok"))
	eng.SetMode(loop.ApprovalYolo)
	u := start(t, eng)
	u.submit("run ls")
	u.idle()
	u.waitPrinted("⚙ shell_echo", "cmd=ls", "⎿ ran: ls", "+2 lines")
	u.key(ctrlO)
	u.waitPrinted("tool call 1", "second line", "third line")

	steps := []struct {
		line string
		want []string
	}{
		{"/wiring", []string{"tool_execute_before", "shell_gate (gate)", "hook calls"}},
		{"/context", []string{"window ", "/context json adds the context object"}},
		{"/context json", []string{`"sessionId"`, `"hook"`}},
		{"/stats", []string{"model calls  2", "tools        2 calls"}},
		{"/tools", []string{"response", "shell_echo", "gate"}},
		{"/plugins", []string{"gate", "running"}},
		{"/plugins status gate", []string{"shell_gate", "tool_execute_before", "order 10"}},
		{"/approval", []string{"approval mode yolo"}},
		{"/approval auto-edit", []string{"approval mode auto-edit"}},
		{"/model", []string{"model    scripted", "answered"}},
		{"/sessions", []string{"• w1"}},
		{"/export md out.md", []string{"wrote out.md"}},
		{"/export json out.json", []string{"wrote out.json"}},
		{"/export json out.json", []string{"out.json exists"}},
		{"/rename w2", []string{"renamed session w1 to w2"}},
		{"/new w3", []string{"new session w3"}},
		{"/import out.json", []string{"imported", "into session w1", "resumed: 1 turn"}},
		{"/resume w2", []string{"resumed session w2"}},
		{"/memory add the sky is blue", []string{"saved memory"}},
		{"/memory search sky", []string{"the sky is blue"}},
		{"/memroy", []string{"did you mean /memory"}},
		{"/plugins reload nosuch", []string{"nosuch"}},
	}
	for _, s := range steps {
		u.submit(s.line)
		u.waitPrinted(s.want...)
	}
	md, err := os.ReadFile(filepath.Join(e.work, "out.md"))
	if err != nil || !strings.Contains(string(md), "run ls") {
		t.Fatalf("out.md: %v %s", err, md)
	}
	if s := eng.Session(); s == nil || s.Name() != "w2" {
		t.Fatalf("open session %v", s)
	}
	if _, err := os.Stat(filepath.Join(e.home, "sessions", "w1.jsonl")); err != nil {
		t.Fatalf("the import did not make w1: %v", err)
	}
}

func TestNoOllama(t *testing.T) {
	e := newEnv(t)
	client, err := llm.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	eng := e.engineWith(t, "n1", client, "qwen3:8b", "")
	u := start(t, eng)
	p := u.printed()
	for _, want := range []string{"http://127.0.0.1:1", "nothing answered", "ollama serve", "ollama pull qwen3:8b"} {
		if !strings.Contains(p, want) {
			t.Errorf("welcome lacks %q:\n%s", want, p)
		}
	}
	u.submit("/help")
	u.waitPrinted("/wiring")
	u.submit("hello?")
	u.idle()
	u.waitPrinted("nothing answered at http://127.0.0.1:1", "ollama serve")
}

func TestResumePrintsTheConversation(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "old", answer("first answer"))
	u := start(t, eng)
	u.submit("first question")
	u.idle()
	u.waitPrinted("first answer")
	u.submit("/quit")
	u.tm.WaitFinished(t, teatestTimeout())
	eng.Close()

	eng2, _ := e.engine(t, "old")
	u2 := start(t, eng2)
	u2.waitPrinted("resumed: 1 turn", "› first question", "first answer")
}

func TestLiveAreaNeverShrinksDuringATurn(t *testing.T) {
	e := newEnv(t)
	text := strings.Repeat("line of the answer\\n\\n", 6)
	eng, _ := e.engine(t, "l1", scripted.Reply{Content: `{"tool_name":"response","tool_args":{"text":"` + text + `"}}`, ChunkSize: 3, Delay: 10 * time.Millisecond})
	u := start(t, eng)
	u.submit("go")
	prev := 0
	for {
		var h int
		var running bool
		u.inspect(func(m *Model) {
			running = m.turn != nil
			if running {
				h = strings.Count(m.View().Content, "\n")
			}
		})
		if !running {
			break
		}
		if h < prev {
			t.Fatalf("the live area shrank from %d to %d lines during the turn", prev, h)
		}
		prev = h
		time.Sleep(5 * time.Millisecond)
	}
}

func TestUpThroughCommandsKeepsBrowsing(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "u1", answer("ok"))
	u := start(t, eng)
	u.submit("a prompt")
	u.idle()
	u.submit("/stats")
	u.waitPrinted("turns")
	u.key(up)
	if got := u.input(); got != "/stats" {
		t.Fatalf("Up gave %q", got)
	}
	u.key(up) // no completion menu took the key
	if got := u.input(); got != "a prompt" {
		t.Fatalf("Up Up gave %q", got)
	}
}

func TestFullscreenKeepsATranscript(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "fs", answer("in the viewport"))
	cfg := eng.Config()
	cfg.Fullscreen = true
	eng.cfg = cfg
	u := start(t, eng)
	u.submit("/help")
	u.waitPrinted("/wiring")
	u.submit("hello")
	u.idle()
	var alt bool
	var content string
	u.inspect(func(m *Model) { v := m.View(); alt, content = v.AltScreen, plain(v.Content) })
	if !alt || !strings.Contains(content, "in the viewport") {
		t.Fatalf("alt screen %v; the screen:\n%s", alt, content)
	}
	if n := strings.Count(content, "\n") + 1; n != 30 {
		t.Fatalf("the full screen has %d lines, want the terminal's 30", n)
	}
	u.key(tea.KeyPressMsg{Code: tea.KeyPgUp})
	if v := u.view(); strings.Contains(v, "in the viewport") {
		t.Fatalf("page up did not scroll back:\n%s", v)
	}
	u.submit("/stats") // new output does not pull a scrolled view down
	u.waitPrinted("model calls")
	if v := u.view(); strings.Contains(v, "model calls") {
		t.Fatalf("the view jumped to the bottom while scrolled up:\n%s", v)
	}
	u.key(tea.KeyPressMsg{Code: tea.KeyPgDown})
	u.key(tea.KeyPressMsg{Code: tea.KeyPgDown})
	u.key(tea.KeyPressMsg{Code: tea.KeyPgDown})
	if v := u.view(); !strings.Contains(v, "model calls") {
		t.Fatalf("page down did not come back:\n%s", v)
	}
}

func TestEditorReplacesTheInput(t *testing.T) {
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "sed -i s/^/edited:/")
	e := newEnv(t)
	eng, _ := e.engine(t, "ed")
	u := start(t, eng)
	u.typeText("draft")
	u.key(tea.KeyPressMsg{Code: 'x', Mod: tea.ModCtrl})
	u.waitFor("the edited input", func(m *Model) bool { return m.input.Value() == "edited:draft" })
}

// TestOperatorCommandsThroughTheTools: with a shell tool loaded, !commands
// run through it (in the operator's own shell session, after the approval);
// with the memory store held by a process that does not serve it (one older
// than the memory service), /memory goes through the memory plugin's tools.
func TestOperatorCommandsThroughTheTools(t *testing.T) {
	e := newEnv(t, "optools")
	held, err := memory.Open(t.Context(), filepath.Join(e.home, "memory"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	eng, _ := e.engine(t, "o1")
	u := start(t, eng)
	if p := u.printed(); !strings.Contains(p, "memory   0 records") || !strings.Contains(p, "embedder ") {
		t.Fatalf("the card does not count the held store:\n%s", p)
	}
	u.submit("!echo via-the-tool; exit 3")
	u.waitFor("the approval dialog", func(m *Model) bool { return len(m.dialogs) > 0 })
	u.typeText("y")
	u.idle()
	u.waitPrinted("[code_execution as operator]", "via-the-tool", "exit 3")

	steps := []struct{ line, want string }{
		// No journal is copied: stats says what it can without the store,
		// search goes through memory_load.
		{"/memory stats", "held without a memory service"},
		{"/memory search blue sky", `memory_load by operator: {"limit":15,"query":"blue sky","threshold":0.1}`},
		{"/memory add the sky is blue", `memory_save by operator: {"key":"operator_note_`},
		{"/memory forget the sky", `memory_forget by operator: {"query":"the sky"}`},
	}
	for _, s := range steps {
		u.submit(s.line)
		u.waitPrinted(s.want)
	}
}
