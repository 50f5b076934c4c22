package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/session"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/tui/history"
	"github.com/exocortex/exocortex/tui/slash"
)

// Messages the model receives from its own commands.
type (
	sessionMsg struct {
		s       *session.Session
		history []*exocortexv1.Message
		err     error
	}
	hostMsg struct {
		h   *host.Host
		err error
	}
	probeMsg struct {
		info llm.ServerInfo
		err  error
	}
	memoryMsg struct {
		summary  string
		problems []string
	}
	printedMsg struct{}
	// reflowedMsg ends a clear-and-print (clearAndPrint).
	reflowedMsg struct{}
	commandMsg  struct {
		in  slash.Invocation
		out Output
		err error
	}
	editorMsg struct {
		text string
		err  error
	}
	// statusTickMsg refreshes plugin health while idle.
	statusTickMsg struct{}
	// firstFrameMsg: the first frame at the terminal's size is on the
	// screen, so prints may go above it (Model.framed).
	firstFrameMsg struct{}
)

// firstFrameWait is how long after the size is known the first frame is
// taken to be drawn: the renderer draws every 1/60 s.
const firstFrameWait = 60 * time.Millisecond

// boot tracks what the welcome card waits for.
type boot struct {
	start                                  time.Time
	sessDone, hostDone, probeDone, memDone bool
	sessErr, hostErr, probeErr             error
	info                                   llm.ServerInfo
	memory                                 string
	history                                []*exocortexv1.Message
	welcomed                               bool
	agentErr                               error
}

func (b *boot) done() bool { return b.sessDone && b.hostDone && b.probeDone && b.memDone }

// Model is the Bubble Tea model of the session. Create it with New; it is
// used through its pointer.
type Model struct {
	ctx  context.Context
	eng  *Engine
	reg  *slash.Registry
	box  *inbox
	st   styles
	md   *markdown
	cfg  Config
	now  func() time.Time
	boot boot

	width, height int

	input   textarea.Model
	hist    *history.History
	search  *search
	menu    *menu
	pastes  map[int]string
	pasteN  int
	attach  []attachment
	queue   []queued
	notice  string
	noticeT time.Time
	noticeE bool

	turn    *turn
	dialogs []*dialog
	tools   []toolRecord
	// notices are the multi-line notices of this run, for /details.
	notices []string
	// problems are the plugins' problems of Config.Problems shown on the
	// welcome card; problemsShown, every one shown (each is shown once).
	problems      []string
	problemsShown map[string]bool
	// shownErr is set once recording what was shown failed (said once).
	shownErr bool
	spin     spinner.Model
	spinning bool

	printQ   []string
	printing bool
	// printed keeps everything printed (the transcript of fullscreen mode,
	// and what tests read), the newest maxPrinted blocks.
	printed []printEntry
	// frames are the heights of the live areas drawn lately (frameHigh).
	frames []frameMark
	// reflow is set when the width changed: everything is printed again;
	// reflowing while that print is in flight.
	reflow, reflowing bool
	// clearReq is a clearing sequence to send with the next print.
	clearReq string
	vp       viewport.Model
	// scrolled is set when the operator scrolled the fullscreen transcript
	// up: new output then does not pull it back to the bottom.
	scrolled bool

	plugins []host.PluginStatus
	failed  int
	models  []string
	lastTPS float64
	lastCtx float64
	// retry is the latest retried model request (retry.go), shown in the
	// status line until the model answers.
	retry   *llm.Retry
	retryAt time.Time
	// slow is the latest extension over its time budget (slow.go), and
	// slowSeen the ones seen in the turn.
	slow     *slowExt
	slowSeen map[string]bool
	// The last model call's token counts (the base of the live estimate).
	lastPrompt, lastOutput int
	// window is the context window of the last request (0: unknown).
	window int

	ctrlCAt  time.Time
	quitting bool
	// sized is set once the terminal's size is known: nothing is drawn
	// before, so the first frame is not drawn at a guessed width.
	sized bool
	// framed is set a few frames after the size is known (firstFrameMsg):
	// nothing is printed before. A print inserted before the renderer drew
	// its first frame is placed as if the live area filled the screen, at
	// its top row, and the lines the shell left there (a build's output)
	// would be written over.
	framed bool

	bottomCache struct{ key, out string }
}

const maxPrinted = 4000

// New returns the model for eng. ctx bounds everything the session starts.
func New(ctx context.Context, eng *Engine) (*Model, error) {
	cfg := eng.Config()
	m := &Model{
		ctx: ctx, eng: eng, reg: Commands(), box: newInbox(), st: newStyles(), md: newMarkdown(),
		cfg: cfg, now: time.Now, width: 80, height: 24, pastes: map[int]string{},
		spin: spinner.New(spinner.WithSpinner(spinner.Dot), spinner.WithStyle(lipgloss.NewStyle().Foreground(lipgloss.Cyan))),
	}
	m.boot.start = time.Now()
	var err error
	if cfg.HistoryFile != "" {
		m.hist, err = history.Open(cfg.HistoryFile, history.DefaultLimit)
		if err != nil {
			// A broken history file does not stop the session.
			m.hist = history.New(history.DefaultLimit)
			m.setNotice(err.Error()+" (history kept in memory for this run)", true)
		}
	} else {
		m.hist = history.New(history.DefaultLimit)
	}
	m.input = newInput()
	m.vp = viewport.New()
	eng.SetFrontend(func(e loop.Event) { m.box.push(eventMsg{e}) }, approverFunc(m.box))
	eng.setRetried(func(r llm.Retry) { m.box.push(retryMsg{r}) })
	eng.setHostEvents(func(e host.Event) { m.box.push(hostEventMsg{e}) })
	m.resize(m.width, m.height)
	return m, nil
}

// eventMsg carries one loop event through the inbox.
type eventMsg struct{ e loop.Event }

func newInput() textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 10
	ta.Placeholder = "Ask anything · / commands · @file · !shell · Enter on an empty line: reflect"
	ta.SetPromptFunc(2, func(info textarea.PromptInfo) string {
		if info.LineNumber == 0 {
			return "› "
		}
		return "  "
	})
	km := textarea.DefaultKeyMap()
	km.InsertNewline.SetKeys("shift+enter", "ctrl+j", "alt+enter")
	km.DeleteCharacterForward.SetKeys("delete")
	km.LinePrevious.SetKeys("up")
	km.LineNext.SetKeys("down")
	ta.KeyMap = km
	s := textarea.DefaultDarkStyles()
	s.Focused.CursorLine = lipgloss.NewStyle()
	s.Focused.Prompt = lipgloss.NewStyle().Foreground(lipgloss.Cyan).Bold(true)
	s.Focused.Placeholder = lipgloss.NewStyle().Foreground(lipgloss.BrightBlack)
	s.Focused.Text = lipgloss.NewStyle()
	s.Blurred = s.Focused
	ta.SetStyles(s)
	ta.SetVirtualCursor(false)
	ta.Focus()
	return ta
}

// Init starts the slow parts: the session, the plugins, the model probe.
func (m *Model) Init() tea.Cmd {
	eng, ctx := m.eng, m.ctx
	return tea.Batch(
		m.box.next,
		m.startSpinner(),
		tea.RequestBackgroundColor,
		func() tea.Msg {
			s, err := eng.OpenSession(ctx, m.cfg.Session)
			if err != nil {
				return sessionMsg{err: err}
			}
			eng.Banners(ctx) // when the host started first, the agent is built now
			return sessionMsg{s: s, history: s.History()}
		},
		func() tea.Msg {
			h, err := eng.StartHost(ctx)
			return hostMsg{h: h, err: err}
		},
		func() tea.Msg {
			info, err := eng.Probe(ctx)
			return probeMsg{info: info, err: err}
		},
	)
}

// Update handles a message and prints what it produced, in order.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if m.quitting {
		return m, tea.Sequence(m.flush(), tea.Quit)
	}
	return m, tea.Batch(cmd, m.flush())
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		if !m.sized {
			m.sized = true
			return tea.Tick(firstFrameWait, func(time.Time) tea.Msg { return firstFrameMsg{} })
		}
		return nil
	case firstFrameMsg:
		m.framed = true
		return nil
	case tea.BackgroundColorMsg:
		if !msg.IsDark() {
			m.md.setStyle("light")
		}
		return nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		return m.paste(msg.Content)
	case tea.MouseWheelMsg:
		if m.cfg.Fullscreen {
			m.vp, _ = m.vp.Update(msg)
			m.scrolled = !m.vp.AtBottom()
		}
		return nil
	case spinner.TickMsg:
		if !m.busyUI() {
			m.spinning = false
			return nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		m.advance(false)
		return cmd
	case inboxMsg:
		var cmds []tea.Cmd
		for _, it := range msg {
			cmds = append(cmds, m.update(it))
		}
		return tea.Batch(append(cmds, m.box.next)...)
	case eventMsg:
		m.event(msg.e)
		return nil
	case retryMsg:
		m.retried(msg.r)
		return nil
	case hostEventMsg:
		m.hostEventShown(msg.e)
		return nil
	case approvalMsg:
		m.dialogs = append(m.dialogs, &dialog{req: msg.req, reply: msg.reply})
		return nil
	case turnDoneMsg:
		return m.turnDone(msg)
	case sessionMsg:
		return m.sessionOpened(msg)
	case hostMsg:
		return m.hostStarted(msg)
	case probeMsg:
		m.boot.probeDone, m.boot.info, m.boot.probeErr = true, msg.info, msg.err
		m.models = msg.info.Models
		return m.maybeWelcome()
	case memoryMsg:
		m.boot.memDone, m.boot.memory = true, msg.summary
		m.startProblems(msg.problems)
		return m.maybeWelcome()
	case problemsMsg:
		m.problemsFound(msg.lines)
		return nil
	case printedMsg:
		m.printing = false
		if m.reflowing {
			// The taller area must reach the screen after the clear before
			// the height changes back (a frame is drawn every 1/60 s).
			return tea.Tick(80*time.Millisecond, func(time.Time) tea.Msg { return reflowedMsg{} })
		}
		return nil
	case reflowedMsg:
		m.reflowing = false
		return nil
	case commandMsg:
		return m.commandDone(msg)
	case editorMsg:
		if msg.err != nil {
			m.setNotice("editor: "+msg.err.Error(), true)
			return nil
		}
		m.input.SetValue(strings.TrimRight(msg.text, "\n"))
		m.refreshMenu()
		return nil
	case statusTickMsg:
		m.refreshPlugins()
		return tea.Batch(m.readProblems(), tea.Tick(5*time.Second, func(time.Time) tea.Msg { return statusTickMsg{} }))
	}
	return nil
}

func (m *Model) resize(w, h int) {
	if max(w, 20) != m.width && m.boot.welcomed && len(m.printed) > 0 && !m.cfg.Fullscreen {
		m.reflow = true
	}
	m.width, m.height = max(w, 20), max(h, 5)
	m.input.SetWidth(m.width)
	m.vp.SetWidth(m.width)
}

// busyUI reports whether something animates (the spinner must tick).
func (m *Model) busyUI() bool { return m.turn != nil || !m.boot.welcomed }

func (m *Model) startSpinner() tea.Cmd {
	if m.spinning {
		return nil
	}
	m.spinning = true
	return m.spin.Tick
}

func (m *Model) sessionOpened(msg sessionMsg) tea.Cmd {
	if !m.boot.sessDone {
		m.boot.sessDone, m.boot.sessErr, m.boot.history = true, msg.err, msg.history
		if msg.err != nil {
			m.boot.sessErr = msg.err
		}
		return m.maybeWelcome()
	}
	return nil
}

func (m *Model) hostStarted(msg hostMsg) tea.Cmd {
	m.boot.hostDone = true
	if msg.h == nil {
		m.boot.hostErr = msg.err
	} else if msg.err != nil {
		m.boot.agentErr = msg.err
	}
	m.refreshPlugins()
	eng, ctx := m.eng, m.ctx
	// The memory store is read after the plugins are up, so the count does
	// not race a memory plugin opening it at start.
	return tea.Batch(
		func() tea.Msg { return memoryMsg{summary: eng.MemorySummary(ctx), problems: eng.Problems()} },
		tea.Tick(5*time.Second, func(time.Time) tea.Msg { return statusTickMsg{} }),
	)
}

func (m *Model) refreshPlugins() {
	if h := m.eng.Host(); h != nil {
		m.plugins = h.Status()
		m.failed = len(h.FailedPlugins())
	}
}

// maybeWelcome prints the welcome card and the resumed conversation once
// everything it shows is known, then starts what the operator queued.
func (m *Model) maybeWelcome() tea.Cmd {
	if m.boot.welcomed || !m.boot.done() {
		return nil
	}
	m.boot.welcomed = true
	m.printFunc(m.welcomeCardAt)
	if m.boot.sessErr == nil && len(m.boot.history) > 0 {
		m.printResumed(m.boot.history)
	}
	return m.next()
}

// printEntry is one block printed above the live area: its text at the
// width it was printed at and, for what is laid out to the width (Markdown,
// wrapped notes), how to lay it out again after a resize.
type printEntry struct {
	text   string
	render func(width int) string
}

// print queues text to go above the live area. Lines are wrapped to the
// width here: a line the terminal wraps by itself would throw off the
// renderer's count of the lines it inserted.
func (m *Model) print(s string) { m.printR(nil, s) }

// printFunc prints what render lays out at the current width, and lays it
// out again when the width changes.
func (m *Model) printFunc(render func(width int) string) { m.printR(render, render(m.width)) }

func (m *Model) printR(render func(int) string, s string) {
	s = ansi.Wrap(s, m.width, "")
	m.printQ = append(m.printQ, s)
	m.printed = append(m.printed, printEntry{text: s, render: render})
	if len(m.printed) > maxPrinted {
		m.printed = append([]printEntry(nil), m.printed[len(m.printed)-maxPrinted/2:]...)
	}
	if m.cfg.Fullscreen {
		m.vp.SetContent(m.Printed())
	}
}

// frameHigh is the tallest live area drawn in the last two seconds: the
// renderer inserts printed lines above the frame it last drew, which may be
// one drawn a moment before the current one.
func (m *Model) frameHigh() int {
	now := time.Now()
	h := 0
	for _, f := range m.frames {
		if now.Sub(f.at) < 2*time.Second {
			h = max(h, f.h)
		}
	}
	return h
}

// noteFrame remembers the height of a live area just drawn.
func (m *Model) noteFrame(h int) {
	now := time.Now()
	if n := len(m.frames); n > 0 && m.frames[n-1].h == h {
		m.frames[n-1].at = now
		return
	}
	keep := m.frames[:0]
	for _, f := range m.frames {
		if now.Sub(f.at) < 2*time.Second {
			keep = append(keep, f)
		}
	}
	m.frames = append(keep, frameMark{h: h, at: now})
}

type frameMark struct {
	h  int
	at time.Time
}

// flush prints the queued text. One print is in flight at a time, and the
// next waits for the previous one's acknowledgement: each command runs on
// its own goroutine, so two prints issued at once could land out of order.
//
// The renderer inserts a print by scrolling the screen up by its height
// and writing it above the live area; when the print and the live area
// together are taller than the screen, the top of the live area (the
// spinner line, the answer's tail) would be scrolled into the scrollback
// with it. So a print goes in pieces that leave the live area room.
func (m *Model) flush() tea.Cmd {
	if m.cfg.Fullscreen {
		m.printQ = nil
		return nil
	}
	if m.printing || !m.framed {
		return nil
	}
	if m.clearReq != "" {
		seq := m.clearReq
		m.clearReq = ""
		m.printQ = nil
		return m.clearAndPrint(seq, nil)
	}
	if m.reflow {
		return m.reprint()
	}
	if len(m.printQ) == 0 {
		return nil
	}
	text := strings.Join(m.printQ, "\n")
	m.printQ = nil
	return m.printLines(nil, strings.Split(text, "\n"))
}

// printLines prints lines in pieces, after the commands in first.
func (m *Model) printLines(first []tea.Cmd, lines []string) tea.Cmd {
	m.printing = true
	fh := m.frameHigh()
	if m.reflowing {
		fh++ // the taller area is drawn after this
	}
	step := max(1, m.height-fh-2)
	cmds := first
	for len(lines) > 0 {
		n := min(step, len(lines))
		cmds = append(cmds, tea.Println(strings.Join(lines[:n], "\n")))
		lines = lines[n:]
	}
	return tea.Sequence(append(cmds, func() tea.Msg { return printedMsg{} })...)
}

// maxReprint bounds what a resize prints again.
const maxReprint = 400

// Clearing sequences. They go out as the start of a print: a print is
// written at once, while a raw write would wait for the next frame and
// land after the prints queued behind it.
const (
	clearVisible = ansi.CursorHomePosition + ansi.EraseEntireScreen
	clearAll     = clearVisible + ansi.EraseEntireDisplay
)

// reprint clears the screen and its scrollback and prints everything again,
// laid out at the new width: text the terminal re-wrapped itself would lose
// its indentation, and rules drawn at the old width would break in two.
func (m *Model) reprint() tea.Cmd {
	m.reflow = false
	m.printQ = nil
	entries := m.printed
	var lines []string
	if len(entries) > maxReprint {
		entries = entries[len(entries)-maxReprint:]
		lines = append(lines, m.st.dim.Render("(earlier output is in the session: /export md FILE)"))
	}
	for i := range entries {
		e := &entries[i]
		if e.render != nil {
			e.text = ansi.Wrap(e.render(m.width), m.width, "")
		} else {
			e.text = ansi.Wrap(e.text, m.width, "")
		}
		lines = append(lines, strings.Split(e.text, "\n")...)
	}
	return m.clearAndPrint(clearAll, lines)
}

// clearAndPrint clears the screen with seq, then prints lines from its top.
// The live area is drawn one line taller until the prints are done: a
// change of its height makes the renderer draw it whole again, where it is
// then (tea.ClearScreen would move the cursor by where the area was before
// the prints, and erase them).
func (m *Model) clearAndPrint(seq string, lines []string) tea.Cmd {
	if len(lines) == 0 {
		lines = []string{" "}
	}
	lines[0] = seq + lines[0]
	m.reflowing = true
	return m.printLines(nil, lines)
}

// Printed returns everything printed above the live area so far.
func (m *Model) Printed() string {
	texts := make([]string, len(m.printed))
	for i, e := range m.printed {
		texts[i] = e.text
	}
	return strings.Join(texts, "\n")
}

// note prints a one-line message with a mark, its continuation lines
// wrapped under the text rather than at the left edge.
func (m *Model) note(st lipgloss.Style, mark, text string) {
	m.printFunc(func(w int) string { return hang("  "+st.Render(mark)+" ", st.Render(text), w) })
}

func (m *Model) setNotice(s string, isErr bool) {
	m.notice, m.noticeE, m.noticeT = s, isErr, m.now()
}

// quit ends the program after the pending prints.
func (m *Model) quit() tea.Cmd {
	if m.turn != nil && m.turn.cancel != nil {
		m.turn.cancel()
	}
	for _, d := range m.dialogs {
		d.answer(loop.Deny)
	}
	m.dialogs = nil
	m.quitting = true
	if !m.cfg.Fullscreen {
		m.print(m.goodbye())
	}
	return nil
}

// goodbye is the last line: the session and how to come back to it.
func (m *Model) goodbye() string {
	s := m.eng.Session()
	if s == nil {
		return m.st.dim.Render("  bye")
	}
	return m.st.dim.Render("  bye · session ") + s.Name() + m.st.dim.Render(" saved · resume: ") +
		"exocortex --resume " + s.Name() + m.st.dim.Render(" (or -c)")
}

// errText is an error as the operator reads it.
func errText(err error) string {
	var se *loop.StopError
	if errors.As(err, &se) {
		return fmt.Sprintf("stopped (%s): %s", se.Reason, se.Message)
	}
	return err.Error()
}
