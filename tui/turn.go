package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/tui/shell"
	"github.com/exocortex/exocortex/tui/stream"
	"github.com/exocortex/exocortex/tui/transcript"
)

type turnKind int

const (
	kindPrompt turnKind = iota
	kindCohesion
	kindShell
)

// turn is the work running now: a monologue, a reflection or a !command.
type turn struct {
	kind   turnKind
	start  time.Time
	cancel context.CancelFunc
	// canceled is set by Ctrl+C, so the end reads "stopped", not an error.
	canceled bool

	iteration int
	reply     strings.Builder // the current model call's text so far
	view      stream.Reply
	parsed    int // bytes of reply that view reflects
	parsedAt  time.Time
	live      liveMarkdown
	// tool is the tool running now ("" between calls).
	tool      string
	toolStart time.Time
	// toolOut is what the operator is shown of the running tool's output so
	// far (the loop's tool_output events, after tool_output_update).
	toolOut  string
	headline string
	answered bool
	// sub names the subordinate agent working now ("" for the operator's).
	sub string
	// height is the live body's height: it grows, never shrinks, within a
	// turn, so a redraw never has to erase and repaint the whole area.
	height int

	// The answer goes to the scrollback a finished paragraph at a time, as
	// it streams: the first committed bytes of its text (commitSrc) are
	// printed, and the live area draws only the paragraph still open. So
	// every line of the answer is printed once, and the live area stays
	// small whatever the answer's length.
	committed int
	commitSrc string
	scan      paraScan
	liveFrom  int // the committed offset t.live renders from
	// headShown is set once this step's headline is printed.
	headShown bool

	// index is the turn's place among the session's operator turns (-1
	// when unknown); keptAt and keptLen when its partial answer was last
	// recorded (see shown.go).
	index   int
	keptAt  time.Time
	keptLen int

	// The model call streaming now, for the live status line: its chunks
	// (Ollama streams a token a chunk) since the first one arrived.
	chunks     int
	firstChunk time.Time

	// The model call's reasoning so far (shown folded: see reasoning.go).
	think      strings.Builder
	thinkStart time.Time
}

// turnDoneMsg ends a turn (pushed by its goroutine after the last event).
type turnDoneMsg struct {
	kind    turnKind
	res     *loop.Result
	err     error
	thought string
	shell   shell.Result
	command string
}

// toolRecord is a tool call, or a model call's reasoning, kept for /expand
// and ctrl+o.
type toolRecord struct {
	n          int
	agent      string
	tool, args string
	result     string
	err        string
	done       bool
	// thought is the reasoning of a record that holds one, and took how
	// long it streamed.
	thought string
	took    time.Duration
}

// queued is work typed while a turn ran; it starts when the turn ends.
type queued struct {
	text    string
	display string
}

// attachment is a !command's output, sent with the next prompt.
type attachment struct {
	command string
	text    string
}

// startPrompt runs a monologue on text. display is what the echo shows.
func (m *Model) startPrompt(text, display string) tea.Cmd {
	m.echo(display)
	index := -1
	if s := m.eng.Session(); s != nil {
		turns, _ := transcript.Build(s.History())
		index = len(turns)
	}
	var shells []string
	for _, a := range m.attach {
		text = a.text + "\n\n" + text
		shells = append(shells, a.command)
	}
	m.attach = nil
	if plainDisplay := ansi.Strip(display); index >= 0 && (plainDisplay != text || len(shells) > 0) {
		m.recordShown(shownRecord{Turn: index, Display: plainDisplay, Shell: shells})
	}
	cmd := m.run(kindPrompt, func(ctx context.Context) turnDoneMsg {
		res, err := m.eng.Run(ctx, text)
		return turnDoneMsg{kind: kindPrompt, res: res, err: err}
	})
	m.turn.index = index
	return cmd
}

// keepEvery is how often a streaming answer is recorded between paragraphs.
const keepEvery = 200 * time.Millisecond

// startCohesion runs the cohesion loop (an empty prompt).
func (m *Model) startCohesion() tea.Cmd {
	return m.run(kindCohesion, func(ctx context.Context) turnDoneMsg {
		th, err := m.eng.Reflect(ctx)
		return turnDoneMsg{kind: kindCohesion, thought: th, err: err}
	})
}

// startShell runs a !command.
func (m *Model) startShell(command string) tea.Cmd {
	m.print(m.st.accent.Render("! ") + m.st.bold.Render(command))
	return m.run(kindShell, func(ctx context.Context) turnDoneMsg {
		res, err := m.eng.RunShell(ctx, command)
		return turnDoneMsg{kind: kindShell, shell: res, err: err, command: command}
	})
}

func (m *Model) run(kind turnKind, work func(context.Context) turnDoneMsg) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.turn = &turn{kind: kind, start: m.now(), cancel: cancel, index: -1}
	m.clearSlow()
	go func() {
		msg := work(ctx)
		cancel()
		m.box.push(msg)
	}()
	return m.startSpinner()
}

// echo prints the operator's prompt.
func (m *Model) echo(text string) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		if i == 0 {
			lines[i] = m.st.prompt.Render("› ") + m.st.bold.Render(l)
		} else {
			lines[i] = "  " + m.st.bold.Render(l)
		}
	}
	m.print("\n" + strings.Join(lines, "\n"))
}

func (m *Model) cancelTurn() tea.Cmd {
	if m.turn == nil {
		return nil
	}
	m.turn.canceled = true
	m.turn.cancel()
	for _, d := range m.dialogs {
		d.answer(loop.Deny)
	}
	m.dialogs = nil
	return nil
}

// event shows one loop event. Everything shown for good goes through print;
// the rest updates the live area.
func (m *Model) event(e loop.Event) {
	t := m.turn
	if e.Agent == "" {
		m.liveStatus(e)
	}
	switch e.Type {
	case loop.EventLLMChunk, loop.EventReasoning, loop.EventLLMReply:
		m.retry = nil // the model answered
	}
	if e.Type == loop.EventOverBudget {
		// A subordinate's slow extension slows the turn too.
		m.overBudget(e)
	}
	if t == nil {
		return
	}
	if t.kind == kindCohesion {
		// A reflection shows nothing but its failures.
		if e.Type == loop.EventHook && e.Error != "" {
			m.note(m.st.err, "!", hookFailure(e))
		}
		return
	}
	if e.Agent != "" {
		m.subEvent(e)
		return
	}
	switch e.Type {
	case loop.EventLLMChunk, loop.EventLLMReply, loop.EventToolCall, loop.EventResponse, loop.EventIteration:
		m.foldThinking()
	}
	switch e.Type {
	case loop.EventReasoning:
		if t.think.Len() == 0 {
			t.thinkStart = m.now()
		}
		t.think.WriteString(e.Text)
	case loop.EventIteration:
		t.iteration = e.Iteration
		t.reply.Reset()
		t.view, t.live, t.tool, t.parsed = stream.Reply{}, liveMarkdown{}, "", 0
		t.resetCommit()
	case loop.EventLLMChunk:
		// Parsed at most every liveEvery (the spinner's tick catches up).
		t.reply.WriteString(e.Text)
		m.advance(false)
	case loop.EventLLMReply:
		t.view = stream.Parse(e.Text)
		t.parsed, t.parsedAt = len(e.Text), m.now()
		if !t.headShown {
			t.headline = t.view.Headline
		}
	case loop.EventToolOutput:
		t.toolOut = e.Text
	case loop.EventToolCall:
		t.tool, t.toolStart, t.toolOut = e.Tool, m.now(), ""
		if e.Tool == "response" {
			return
		}
		rec := toolRecord{n: len(m.tools) + 1, tool: e.Tool, args: string(e.Args)}
		m.tools = append(m.tools, rec)
		var b strings.Builder
		b.WriteString(m.takeHeadline())
		fmt.Fprintf(&b, "  %s %s %s", m.st.accent.Render("⚙"), m.st.bold.Render(e.Tool), m.st.dim.Render(clip(compactArgs(e.Args), max(20, m.width-len(e.Tool)-8))))
		m.print(b.String())
		// The live area no longer needs the reply: the step is printed.
		t.reply.Reset()
		t.view, t.live, t.headline, t.parsed = stream.Reply{}, liveMarkdown{}, "", 0
	case loop.EventToolResult:
		t.tool, t.toolOut = "", ""
		if e.Tool == "response" {
			if e.Error != "" {
				// The answer did not go through (bad arguments): say why.
				m.print(m.takeHeadline() + m.resultLine(e.Result, e.Error, 0))
			}
			return
		}
		if n := len(m.tools); n > 0 && m.tools[n-1].tool == e.Tool && !m.tools[n-1].done {
			m.tools[n-1].result, m.tools[n-1].err, m.tools[n-1].done = e.Result, e.Error, true
		}
		m.print(m.resultLine(e.Result, e.Error, len(m.tools)))
		t.resetCommit()
	case loop.EventApproval:
		verdict, _, _ := strings.Cut(e.Result, ":")
		mark, st := "✓", m.st.ok
		if verdict == loop.Deny.String() {
			mark, st = "✗", m.st.err
		}
		m.print("  " + st.Render(mark+" "+strings.ReplaceAll(verdict, "_", " ")) + m.st.dim.Render(" "+clip(oneLine(e.Text), m.width-24)+" ("+strings.TrimSpace(strings.TrimPrefix(e.Result, verdict+":"))+")"))
	case loop.EventSignal:
		first, _, _ := strings.Cut(strings.TrimSpace(e.Text), "\n")
		m.print(m.takeHeadline() + m.st.warn.Render("  ↺ "+e.Signal) + m.st.dim.Render(": "+clip(first, max(20, m.width-len(e.Signal)-8))))
	case loop.EventNotice:
		text := e.Text
		if e.Error != "" {
			text += ": " + e.Error
		}
		m.notice1(text)
	case loop.EventHook:
		// A stopped turn cancels the hooks in flight: their "context
		// canceled" is the stop itself, not a failure worth a line.
		if e.Error != "" && !(t.canceled && strings.Contains(e.Error, "canceled")) {
			m.note(m.st.err, "!", hookFailure(e))
		}
	case loop.EventResponse:
		t.answered = true
		m.finishAnswer(e.Text)
		t.reply.Reset()
		t.view, t.live, t.parsed = stream.Reply{}, liveMarkdown{}, 0
	}
}

// liveStatus keeps the status line's context fill and speed current: the
// request's size over the window when it goes out (the loop's budget
// event), the model's own figures when a call ends, and estimates while it
// streams (that size plus what was written since; the chunks so far over
// the time since the first).
func (m *Model) liveStatus(e loop.Event) {
	window := m.window
	if window <= 0 {
		window = m.cfg.NumCtx
	}
	if window <= 0 {
		window = m.boot.info.ContextLength
	}
	t := m.turn
	switch e.Type {
	case loop.EventBudget:
		// The request about to go out: its size over the window.
		if e.Budget != nil && e.Budget.Window > 0 {
			m.lastCtx, m.window = e.ContextFill, e.Budget.Window
			m.lastPrompt, m.lastOutput = e.PromptTokens, 0
		}
	case loop.EventLLMReply:
		m.lastTPS, m.lastCtx = e.TokensPerSec, e.ContextFill
		m.lastPrompt, m.lastOutput = e.PromptTokens, e.OutputTokens
		if t != nil {
			t.chunks, t.firstChunk = 0, time.Time{}
		}
	case loop.EventLLMChunk:
		if t == nil {
			return
		}
		now := m.now()
		if t.chunks == 0 {
			t.firstChunk = now
		}
		t.chunks++
		if d := now.Sub(t.firstChunk); d >= 250*time.Millisecond {
			m.lastTPS = float64(t.chunks) / d.Seconds()
		}
		if window > 0 && m.lastPrompt > 0 {
			m.lastCtx = min(1, float64(m.lastPrompt+m.lastOutput+t.chunks)/float64(window))
		}
	}
}

func (t *turn) resetCommit() {
	t.committed, t.commitSrc, t.scan, t.headShown = 0, "", paraScan{}, false
}

// answering reports whether the reply being streamed is an answer: the
// response tool's text, prose, or a "text" argument written before the
// tool's name (JSON keys come in any order; it is shown as the answer).
func answering(v stream.Reply) bool {
	return v.Text != "" && (v.Tool == "response" || v.Tool == "")
}

// advance parses the reply streamed so far (at most every liveEvery unless
// force) and prints the answer's finished paragraphs.
func (m *Model) advance(force bool) {
	t := m.turn
	if t == nil || t.kind != kindPrompt {
		return
	}
	now := m.now()
	if t.reply.Len() != t.parsed && (force || t.parsed == 0 || now.Sub(t.parsedAt) >= liveEvery) {
		t.view = stream.Parse(t.reply.String())
		t.parsed, t.parsedAt = t.reply.Len(), now
	}
	v := t.view
	if !answering(v) || !strings.HasPrefix(v.Text, t.commitSrc) {
		return
	}
	cut := t.scan.end(v.Text)
	if cut <= t.committed {
		m.keepPartial(v.Text, false)
		return
	}
	m.keepPartial(v.Text, true)
	src := v.Text[t.committed:cut]
	t.committed, t.commitSrc = cut, v.Text[:cut]
	if strings.TrimSpace(src) == "" {
		return
	}
	if !t.headShown {
		t.headShown = true
		if h := v.Headline; h != "" {
			m.print(m.st.accent.Render("● ") + h)
		}
	}
	m.printMarkdown(src)
}

// printMarkdown prints src rendered a paragraph at a time, each after a
// blank line: the same lines whether the answer streamed out in pieces
// (advance, finishAnswer) or is printed whole (a resumed session).
func (m *Model) printMarkdown(src string) {
	md := m.md
	for _, p := range paragraphs(src) {
		m.printFunc(func(w int) string { return "\n" + md.render(p, w) })
	}
}

// finishAnswer prints what the answer has beyond what streamed out already.
func (m *Model) finishAnswer(text string) {
	t := m.turn
	if !t.headShown {
		t.headShown = true
		h := m.takeHeadline()
		if h == "" && t.view.Headline != "" {
			// Stopped before the reply was complete: its headline as
			// streamed.
			h = m.st.accent.Render("● ") + t.view.Headline
		}
		if h != "" {
			m.print(strings.TrimSuffix(h, "\n"))
		}
	}
	t.headline = ""
	rest := text
	if t.committed > 0 && strings.HasPrefix(text, t.commitSrc) {
		rest = text[len(t.commitSrc):]
	}
	if strings.TrimSpace(rest) != "" {
		m.printMarkdown(rest)
	}
	t.resetCommit()
}

// notice1 prints a notice's first line; the rest waits for /details.
func (m *Model) notice1(text string) {
	text = strings.TrimSpace(text)
	first, rest, long := strings.Cut(text, "\n")
	if !long {
		m.note(m.st.warn, "!", text)
		return
	}
	m.notices = append(m.notices, text)
	n := len(m.notices)
	more := fmt.Sprintf(" (+%s · /details %d)", plural(strings.Count(rest, "\n")+1, "line"), n)
	st, dim := m.st.warn, m.st.dim
	m.printFunc(func(w int) string { return hang("  "+st.Render("!")+" ", st.Render(first)+dim.Render(more), w) })
}

// details prints notice n (0 for the last) in full.
func (m *Model) details(n int) {
	if len(m.notices) == 0 {
		m.setNotice("no notice with details yet in this run", false)
		return
	}
	if n <= 0 || n > len(m.notices) {
		n = len(m.notices)
	}
	m.print(m.st.accent.Render(fmt.Sprintf("notice %d", n)) + "\n" + indentBlock(m.notices[n-1], "  "))
}

// takeHeadline returns the last reply's headline as a line to print, once.
func (m *Model) takeHeadline() string {
	h := m.turn.headline
	m.turn.headline = ""
	if h == "" {
		return ""
	}
	return m.st.accent.Render("● ") + h + "\n"
}

// subEvent shows a subordinate agent's work compactly.
func (m *Model) subEvent(e loop.Event) {
	t := m.turn
	t.sub = e.Agent
	prefix := m.st.dim.Render("  ↳ " + e.Agent + " ")
	switch e.Type {
	case loop.EventToolCall:
		if e.Tool != "response" {
			m.tools = append(m.tools, toolRecord{n: len(m.tools) + 1, agent: e.Agent, tool: e.Tool, args: string(e.Args)})
			m.print(prefix + m.st.accent.Render("⚙ ") + e.Tool + " " + m.st.dim.Render(clip(compactArgs(e.Args), max(20, m.width-30))))
		}
	case loop.EventToolResult:
		if e.Tool != "response" {
			for i := len(m.tools) - 1; i >= 0; i-- {
				if m.tools[i].agent == e.Agent && m.tools[i].tool == e.Tool && !m.tools[i].done {
					m.tools[i].result, m.tools[i].err, m.tools[i].done = e.Result, e.Error, true
					break
				}
			}
		}
	case loop.EventResponse:
		first, _, _ := strings.Cut(strings.TrimSpace(e.Text), "\n")
		m.print(prefix + "answered: " + m.st.dim.Render(clip(first, max(20, m.width-30))))
	case loop.EventHook:
		if e.Error != "" {
			m.note(m.st.err, "!", e.Agent+": "+hookFailure(e))
		}
	case loop.EventMonologueEnd:
		t.sub = ""
	}
}

func hookFailure(e loop.Event) string {
	return fmt.Sprintf("extension %s (plugin %s) failed at %s and was skipped: %s", e.Extension, e.Plugin, e.Hook, clip(oneLine(e.Error), 200))
}

// resultLine is a tool result, folded to its first line.
func (m *Model) resultLine(result, errText string, n int) string {
	text, st := result, m.st.dim
	if errText != "" {
		text, st = errText, m.st.err
		if result != "" {
			text = errText + " · " + result
		}
	}
	text = strings.TrimSpace(text)
	lines := strings.Split(text, "\n")
	first := lines[0]
	if first == "" {
		first = "(no output)"
	}
	more := ""
	if len(lines) > 1 && n > 0 {
		more = fmt.Sprintf(" (+%d lines · ctrl+o or /expand %d)", len(lines)-1, n)
	}
	return "    " + st.Render("⎿ "+clip(first, max(20, m.width-len(more)-8))) + m.st.dim.Render(more)
}

// compactArgs shows tool arguments on one line.
func compactArgs(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil {
		return oneLine(string(raw))
	}
	var parts []string
	for _, k := range sortedKeys(v) {
		val := v[k]
		s, ok := val.(string)
		if !ok {
			b, _ := json.Marshal(val)
			s = string(b)
		}
		parts = append(parts, k+"="+oneLine(s))
	}
	return strings.Join(parts, " ")
}

// expand prints tool call n (0 for the last) in full.
func (m *Model) expand(n int) {
	if len(m.tools) == 0 {
		m.setNotice("no tool call yet in this run", false)
		return
	}
	if n <= 0 || n > len(m.tools) {
		n = len(m.tools)
	}
	r := m.tools[n-1]
	var b strings.Builder
	if r.thought != "" {
		fmt.Fprintf(&b, "%s\n", m.st.accent.Render(fmt.Sprintf("thought %d · %s", r.n, tenths(r.took))))
		b.WriteString(m.st.dim.Render(indentBlock(r.thought, "  ")))
		m.print(b.String())
		return
	}
	who := ""
	if r.agent != "" {
		who = r.agent + ": "
	}
	fmt.Fprintf(&b, "%s %s%s\n", m.st.accent.Render(fmt.Sprintf("tool call %d ·", r.n)), who, m.st.bold.Render(r.tool))
	var pretty any
	args := r.args
	if json.Unmarshal([]byte(r.args), &pretty) == nil {
		if b, err := json.MarshalIndent(pretty, "", "  "); err == nil {
			args = string(b)
		}
	}
	b.WriteString(m.st.dim.Render("arguments") + "\n" + indentBlock(args, "  ") + "\n")
	switch {
	case !r.done:
		b.WriteString(m.st.dim.Render("(still running)"))
	case r.err != "":
		b.WriteString(m.st.err.Render("error") + "\n" + indentBlock(r.err, "  "))
		if r.result != "" {
			b.WriteString("\n" + m.st.dim.Render("result") + "\n" + indentBlock(r.result, "  "))
		}
	default:
		b.WriteString(m.st.dim.Render("result") + "\n" + indentBlock(r.result, "  "))
	}
	m.print(b.String())
}

func indentBlock(s, pad string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return pad + "(empty)"
	}
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// turnDone ends the turn: what it left to say, then the next queued work.
func (m *Model) turnDone(msg turnDoneMsg) tea.Cmd {
	m.foldThinking() // a reply cut short may leave its reasoning open
	m.retry = nil
	t := m.turn
	m.turn = nil
	if m.slow != nil {
		m.slow.done = true
	}
	for _, d := range m.dialogs {
		d.answer(loop.Deny)
	}
	m.dialogs = nil
	canceled := t != nil && t.canceled
	elapsed := time.Duration(0)
	if t != nil {
		elapsed = m.now().Sub(t.start)
	}
	switch msg.kind {
	case kindPrompt:
		switch {
		case msg.err == nil:
			if t != nil && !t.answered && msg.res != nil && msg.res.Response != "" {
				m.turn = t
				m.finishAnswer(msg.res.Response)
				m.turn = nil
			}
		case canceled || errors.Is(msg.err, context.Canceled):
			// What was already on the screen stays in the scrollback: the
			// reply's headline and the part of the answer written.
			if t != nil && t.reply.Len() > 0 {
				v := stream.Parse(t.reply.String())
				m.turn = t
				t.view = v
				switch {
				case strings.TrimSpace(v.Text) != "":
					m.finishAnswer(v.Text)
					if t.index >= 0 {
						m.recordShown(shownRecord{Turn: t.index, Partial: v.Text, Headline: v.Headline, Stopped: true})
					}
				case !t.headShown && v.Headline != "":
					m.print(m.st.accent.Render("● ") + v.Headline)
				}
				m.turn = nil
			}
			m.note(m.st.warn, "⏹", "stopped (ctrl+c) before the answer was complete; the session goes on")
		default:
			var se *loop.StopError
			if errors.As(msg.err, &se) {
				m.note(m.st.warn, "⏹", errText(msg.err))
			} else {
				m.note(m.st.err, "✗", errText(msg.err))
			}
		}
		m.print(m.st.dim.Render("  " + m.footer(elapsed, msg.res)))
	case kindCohesion:
		switch {
		case msg.err == nil:
			m.print(m.st.dim.Render("· the agent reflected; the thought is in the session's context (/thoughts shows it)"))
		case canceled || errors.Is(msg.err, context.Canceled):
			m.print(m.st.warn.Render("  ⏹ reflection stopped"))
		default:
			m.print(m.st.err.Render("  ✗ reflection failed: " + errText(msg.err)))
		}
	case kindShell:
		m.shellDone(msg, canceled)
	}
	m.refreshPlugins()
	return m.next()
}

func (m *Model) footer(d time.Duration, res *loop.Result) string {
	parts := []string{duration(d)}
	if res != nil && res.Iterations > 0 {
		parts = append(parts, plural(res.Iterations, "step"))
	}
	if m.lastTPS > 0 {
		parts = append(parts, fmt.Sprintf("%.0f tok/s", m.lastTPS))
	}
	return strings.Join(parts, " · ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (m *Model) shellDone(msg turnDoneMsg, canceled bool) {
	res := msg.shell
	switch {
	case errors.Is(msg.err, shell.ErrDenied):
		m.note(m.st.warn, "✗", msg.err.Error())
		return
	case canceled:
		m.print(m.st.warn.Render("  ⏹ stopped (ctrl+c)"))
	case msg.err != nil:
		m.note(m.st.err, "✗", msg.err.Error())
		if res.Output == "" {
			return
		}
	}
	out := strings.TrimRight(res.Output, "\n")
	lines := strings.Split(out, "\n")
	shown := lines
	if len(lines) > 40 {
		shown = append(lines[:20:20], m.st.dim.Render(fmt.Sprintf("… %d lines …", len(lines)-40)))
		shown = append(shown, lines[len(lines)-20:]...)
	}
	if out != "" {
		m.print(indentBlock(strings.Join(shown, "\n"), "  "))
	}
	status := fmt.Sprintf("exit %d · %s · %s", res.ExitCode, duration(res.Duration), res.Decision)
	if res.Truncated {
		status += " · output cut at " + bytesize(int64(len(res.Output)))
	}
	st := m.st.dim
	if res.ExitCode != 0 {
		st = m.st.warn
	}
	m.print("  " + st.Render(status) + m.st.dim.Render(" · the output goes with your next message"))
	const maxAttach = 16 << 10
	text := res.Output
	if len(text) > maxAttach {
		text = text[:maxAttach] + "\n… (cut)"
	}
	m.attach = append(m.attach, attachment{
		command: msg.command,
		text:    fmt.Sprintf("The operator ran `%s` in the shell (exit %d); its output:\n%s", msg.command, res.ExitCode, fence(text)),
	})
}

func fence(s string) string {
	ticks := "```"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + "\n" + strings.TrimRight(s, "\n") + "\n" + ticks
}

// next starts the first queued item, if the session is ready for it.
func (m *Model) next() tea.Cmd {
	if m.turn != nil || !m.boot.welcomed || len(m.queue) == 0 {
		return nil
	}
	q := m.queue[0]
	m.queue = m.queue[1:]
	return m.submit(q.text, q.display, true)
}
