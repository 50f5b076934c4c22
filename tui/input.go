package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/tui/slash"
)

// search is Ctrl+R: a reverse search through the input history.
type search struct {
	query string
	idx   int // the match shown, -1 for none
	saved string
}

// menu is the completion menu under the input.
type menu struct {
	items []slash.Candidate
	sel   int
}

// Paste thresholds: a paste longer than this stays one message but shows as
// a placeholder in the input, expanded when the message is sent.
const (
	pasteLines = 12
	pasteBytes = 2000
)

var pasteRef = regexp.MustCompile(`\[pasted text #(\d+): \d+ lines?\]`)

// key handles a key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	if len(m.dialogs) > 0 {
		return m.dialogKey(k)
	}
	if m.search != nil {
		return m.searchKey(k)
	}
	s := k.String()
	if s != "ctrl+c" && !m.ctrlCAt.IsZero() {
		// The "press ctrl+c again" hint is stale once another key is pressed.
		m.ctrlCAt = time.Time{}
		if m.notice == quitHint {
			m.notice = ""
		}
	}
	switch s {
	case "ctrl+c":
		return m.ctrlC()
	case "ctrl+d":
		if m.input.Value() == "" {
			return m.quit()
		}
		return m.passToInput(tea.KeyPressMsg{Code: tea.KeyDelete})
	case "esc":
		switch {
		case m.menu != nil:
			m.menu = nil
		case m.turn != nil:
			return m.cancelTurn()
		}
		return nil
	case "enter":
		return m.enter()
	case "tab":
		if m.menu != nil {
			m.accept()
			return nil
		}
		return nil
	case "up", "ctrl+p":
		if m.menu != nil {
			m.menu.sel = (m.menu.sel + len(m.menu.items) - 1) % len(m.menu.items)
			return nil
		}
		if s == "ctrl+p" || m.input.Line() == 0 {
			if v, ok := m.hist.Prev(m.input.Value()); ok {
				m.recall(v)
			}
			return nil
		}
	case "down", "ctrl+n":
		if m.menu != nil {
			m.menu.sel = (m.menu.sel + 1) % len(m.menu.items)
			return nil
		}
		if s == "ctrl+n" || m.input.Line() >= m.input.LineCount()-1 {
			if v, ok := m.hist.Next(); ok {
				m.recall(v)
			}
			return nil
		}
	case "ctrl+r":
		m.search = &search{idx: -1, saved: m.input.Value()}
		m.menu = nil
		return nil
	case "ctrl+x":
		return m.openEditor()
	case "ctrl+o":
		m.expand(0)
		return nil
	case "ctrl+l":
		// The visible screen; the scrollback stays.
		m.notice = ""
		if m.cfg.Fullscreen {
			return tea.ClearScreen
		}
		m.clearReq = clearVisible
		return nil
	case "shift+tab":
		next := map[loop.ApprovalMode]loop.ApprovalMode{
			loop.ApprovalDefault: loop.ApprovalAutoEdit, loop.ApprovalAutoEdit: loop.ApprovalYolo, loop.ApprovalYolo: loop.ApprovalDefault,
		}[m.eng.Mode()]
		m.eng.SetMode(next)
		m.setNotice(describeMode(next), false)
		return nil
	case "pgup":
		if m.cfg.Fullscreen {
			m.vp.PageUp()
			m.scrolled = !m.vp.AtBottom()
			return nil
		}
	case "pgdown":
		if m.cfg.Fullscreen {
			m.vp.PageDown()
			m.scrolled = !m.vp.AtBottom()
			return nil
		}
	}
	return m.passToInput(k)
}

// passToInput lets the text area edit, then updates the menu.
func (m *Model) passToInput(msg tea.Msg) tea.Cmd {
	before := m.input.Value()
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if m.input.Value() != before {
		m.hist.Reset()
		m.refreshMenu()
	}
	return cmd
}

// recall shows a history entry; no completion menu opens, so the next Up
// or Down keeps browsing.
func (m *Model) recall(v string) {
	m.input.SetValue(v)
	m.input.MoveToEnd()
	m.menu = nil
}

func (m *Model) setInput(v string) {
	m.input.SetValue(v)
	m.input.MoveToEnd()
	m.refreshMenu()
}

const quitHint = "press ctrl+c again to leave (or ctrl+d)"

// ctrlC stops the turn; with none, clears the input; on an empty input, a
// second press within two seconds leaves.
func (m *Model) ctrlC() tea.Cmd {
	switch {
	case m.turn != nil:
		return m.cancelTurn()
	case m.input.Value() != "":
		m.setInput("")
		m.hist.Reset()
		return nil
	case !m.ctrlCAt.IsZero() && m.now().Sub(m.ctrlCAt) < 2*time.Second:
		return m.quit()
	}
	m.ctrlCAt = m.now()
	m.setNotice(quitHint, false)
	return nil
}

func (m *Model) paste(content string) tea.Cmd {
	if len(m.dialogs) > 0 {
		return nil
	}
	if m.search != nil {
		m.search.query += oneLine(content)
		m.searchFrom(m.hist.Len())
		return nil
	}
	content = strings.ReplaceAll(content, "\r\n", "\n")
	n := strings.Count(content, "\n") + 1
	if n > pasteLines || len(content) > pasteBytes {
		m.pasteN++
		m.pastes[m.pasteN] = content
		content = fmt.Sprintf("[pasted text #%d: %s]", m.pasteN, plural(n, "line"))
	}
	return m.passToInput(tea.PasteMsg{Content: content})
}

// expandPastes puts the pasted texts back in place of their placeholders.
func (m *Model) expandPastes(s string) string {
	return pasteRef.ReplaceAllStringFunc(s, func(ref string) string {
		n, _ := strconv.Atoi(pasteRef.FindStringSubmatch(ref)[1])
		if text, ok := m.pastes[n]; ok {
			return text
		}
		return ref
	})
}

// enter sends the input, or accepts the completion shown.
func (m *Model) enter() tea.Cmd {
	v := m.input.Value()
	if m.menu != nil {
		c := m.menu.items[m.menu.sel]
		if strings.TrimSpace(c.Line) != strings.TrimSpace(v) {
			// A command that can run as it is runs; one that needs an
			// argument is completed and waits for it.
			if !c.Runnable || !slash.IsCommand(c.Line) {
				m.accept()
				return nil
			}
			v = strings.TrimSpace(c.Line)
		}
	}
	// A trailing backslash continues the input on a new line, for
	// terminals that send nothing distinct for shift+enter.
	if strings.HasSuffix(v, "\\") && m.input.Line() == m.input.LineCount()-1 {
		m.input.SetValue(strings.TrimSuffix(v, "\\") + "\n")
		m.input.MoveToEnd()
		return nil
	}
	text := m.expandPastes(v)
	if mask := m.eng.Config().Mask; mask != nil {
		text = mask(text)
	}
	if strings.TrimSpace(text) != "" {
		if err := m.hist.Add(text); err != nil {
			m.setNotice(err.Error(), true)
		}
	}
	m.input.Reset()
	m.menu = nil
	m.pastes, m.pasteN = map[int]string{}, 0
	// A hint about what was on the input line is stale once it is sent.
	m.notice = ""
	return m.submit(text, text, false)
}

// submit routes what the operator sent: a command, a !command, a prompt, or
// (empty) the cohesion loop. fromQueue is set when it waited for a turn.
func (m *Model) submit(text, display string, fromQueue bool) tea.Cmd {
	trimmed := strings.TrimSpace(text)
	if slash.IsCommand(trimmed) {
		return m.command(trimmed)
	}
	busy := m.turn != nil || !m.boot.welcomed
	if busy && !fromQueue {
		if trimmed == "" {
			return nil
		}
		m.queue = append(m.queue, queued{text: text, display: display})
		if m.turn != nil {
			m.setNotice("queued: it runs when this turn ends (esc or ctrl+c stops the turn)", false)
		}
		return nil
	}
	if m.boot.sessErr != nil && m.eng.Session() == nil {
		m.setNotice("no session is open ("+m.boot.sessErr.Error()+"); /new opens a fresh one", true)
		return nil
	}
	switch {
	case trimmed == "":
		return m.startCohesion()
	case strings.HasPrefix(trimmed, "!"):
		return m.startShell(strings.TrimSpace(trimmed[1:]))
	}
	expanded, files, err := m.expandFiles(text)
	if err != nil {
		m.echo(display)
		m.note(m.st.err, "✗", err.Error())
		return nil
	}
	if len(files) > 0 {
		display += "\n" + m.st.dim.Render("(with "+strings.Join(files, ", ")+")")
	}
	return m.startPrompt(expanded, display)
}

// fileRef matches @path at the start of the text or after white space.
var fileRef = regexp.MustCompile(`(^|\s)@([^\s@]+)`)

// maxInclude bounds a file included with @path.
const maxInclude = 256 << 10

// expandFiles appends the files named by @path to the prompt. A path that
// does not exist is an error (the prompt is not sent): the operator meant a
// file. An e-mail address is not a reference: it has no white space before
// its @.
func (m *Model) expandFiles(text string) (string, []string, error) {
	var blocks, names []string
	seen := map[string]bool{}
	for _, match := range fileRef.FindAllStringSubmatch(text, -1) {
		ref := strings.TrimRight(match[2], ".,;:!?)\"'")
		if seen[ref] {
			continue
		}
		seen[ref] = true
		path := m.eng.resolve(ref)
		fi, err := os.Stat(path)
		if err != nil {
			return "", nil, fmt.Errorf("@%s: %v (nothing was sent; fix the path or remove the @)", ref, errors.Unwrap(err))
		}
		if fi.IsDir() {
			entries, err := os.ReadDir(path)
			if err != nil {
				return "", nil, fmt.Errorf("@%s: %w", ref, err)
			}
			var list []string
			for _, e := range entries {
				n := e.Name()
				if e.IsDir() {
					n += "/"
				}
				list = append(list, n)
			}
			blocks = append(blocks, fmt.Sprintf("Directory %s (%d entries):\n%s", ref, len(list), fence(strings.Join(list, "\n"))))
			names = append(names, ref+"/")
			continue
		}
		if fi.Size() > maxInclude {
			return "", nil, fmt.Errorf("@%s is %s; files up to %s can be included (point the agent at the path instead)", ref, bytesize(fi.Size()), bytesize(maxInclude))
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", nil, fmt.Errorf("@%s: %w", ref, err)
		}
		if !utf8.Valid(b) || strings.ContainsRune(string(b), 0) {
			return "", nil, fmt.Errorf("@%s is not text (binary files cannot be included)", ref)
		}
		blocks = append(blocks, fmt.Sprintf("File %s:\n%s", ref, fence(string(b))))
		names = append(names, fmt.Sprintf("%s, %s", ref, bytesize(fi.Size())))
	}
	if len(blocks) == 0 {
		return text, nil, nil
	}
	return text + "\n\n" + strings.Join(blocks, "\n\n"), names, nil
}

// command runs a slash command: the terminal's own at once, the engine's on
// a goroutine (they may read the disk or ask the server).
func (m *Model) command(line string) tea.Cmd {
	in, err := m.reg.Parse(line)
	m.print(m.st.dim.Render(line))
	if err != nil {
		m.note(m.st.err, "✗", err.Error())
		return nil
	}
	switch in.Name {
	case "help":
		m.print(m.help(in.Arg(0)))
		return nil
	case "quit":
		return m.quit()
	case "clear":
		// The screen and its scrollback: what this run printed is gone
		// from the terminal (the session keeps it: /export).
		m.printed, m.printQ = nil, nil
		m.vp.SetContent("")
		m.clearReq = clearAll
		return nil
	case "expand":
		n, _ := strconv.Atoi(in.Arg(0))
		m.expand(n)
		return nil
	case "details":
		n, _ := strconv.Atoi(in.Arg(0))
		m.details(n)
		return nil
	}
	switch in.Name {
	case "resume", "new", "rename", "import", "model":
		if m.turn != nil && (in.Name != "model" || in.Arg(0) != "") {
			m.note(m.st.err, "✗", ErrBusy.Error())
			return nil
		}
	}
	eng, ctx := m.eng, m.ctx
	return func() tea.Msg {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		out, err := eng.Exec(cctx, in)
		return commandMsg{in: in, out: out, err: err}
	}
}

func (m *Model) commandDone(msg commandMsg) tea.Cmd {
	if msg.err != nil {
		m.note(m.st.err, "✗", msg.err.Error())
		return nil
	}
	out := msg.out
	var b strings.Builder
	if out.Title != "" {
		b.WriteString(m.st.accent.Render(out.Title) + "\n")
	}
	if out.Title != "" {
		text := indentBlock(out.Text, "  ")
		if out.Table {
			lines := strings.Split(text, "\n")
			for i, l := range lines {
				lines[i] = ansi.Truncate(l, m.width, "…")
			}
			text = strings.Join(lines, "\n")
		}
		b.WriteString(text)
	} else {
		b.WriteString(m.st.ok.Render("  ✓ ") + out.Text)
	}
	m.print(b.String())
	if out.Switched {
		m.tools = nil
		m.attach = nil
		if s := m.eng.Session(); s != nil {
			if h := s.History(); len(h) > 0 {
				m.printResumed(h)
			}
		}
	}
	m.refreshPlugins()
	return nil
}

// help is /help: keys and commands, or one command.
func (m *Model) help(name string) string {
	if name == "all" {
		return m.helpAll()
	}
	if name != "" {
		c, ok := m.reg.Lookup(strings.TrimPrefix(name, "/"))
		if !ok {
			return m.st.err.Render("  ✗ no command /" + strings.TrimPrefix(name, "/"))
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s  %s", m.st.accent.Render(strings.TrimSpace("/"+c.Name+" "+c.Args)), c.Summary)
		for _, s := range c.Subs {
			fmt.Fprintf(&b, "\n  /%s %s %s  %s", c.Name, s.Name, s.Args, m.st.dim.Render(s.Summary))
		}
		if len(c.Aliases) > 0 {
			fmt.Fprintf(&b, "\n  %s", m.st.dim.Render("also: /"+strings.Join(c.Aliases, ", /")))
		}
		return b.String()
	}
	return m.helpShort()
}

// shortHelp are the commands /help lists; /help all lists every one.
var shortHelp = []string{"help", "model", "sessions", "resume", "new", "memory", "tools", "wiring", "context", "stats", "expand", "details", "export", "approval", "clear", "quit"}

// helpShort is /help: the common keys and commands, short enough for a
// 24-row terminal.
func (m *Model) helpShort() string {
	var b strings.Builder
	b.WriteString(m.st.accent.Render("keys") + "\n")
	keys := []string{
		"enter send", "shift+enter/ctrl+j new line", "↑↓ history", "ctrl+r search",
		"tab complete", "ctrl+x $EDITOR", "ctrl+o last tool call", "esc/ctrl+c stop",
		"shift+tab approval mode", "ctrl+l clear", "ctrl+d leave", "@path file", "!cmd shell",
	}
	b.WriteString(hang("  ", m.st.dim.Render(strings.Join(keys, " · ")), m.width) + "\n")
	b.WriteString(m.st.accent.Render("commands"))
	rows := map[string]slash.Row{}
	for _, r := range m.reg.Rows() {
		// A command's own row comes before its subcommands'.
		if f := strings.Fields(r.Usage); len(f) > 0 && strings.HasPrefix(r.Usage, "/") {
			if _, seen := rows[strings.TrimPrefix(f[0], "/")]; !seen {
				rows[strings.TrimPrefix(f[0], "/")] = r
			}
		}
	}
	uw := 0
	for _, n := range shortHelp {
		if _, ok := rows[n]; ok {
			uw = max(uw, len("/"+n))
		}
	}
	for _, n := range shortHelp {
		r, ok := rows[n]
		if !ok {
			continue
		}
		b.WriteString("\n" + m.st.dim.Render(clip(fmt.Sprintf("  %-*s  %s", uw, "/"+n, r.Summary), m.width)))
	}
	b.WriteString("\n" + m.st.dim.Render("/help all: every command and key · /help NAME: one command"))
	return b.String()
}

// helpAll is /help all: every key and command.
func (m *Model) helpAll() string {
	keys := [][2]string{
		{"enter", "send (an empty line: the agent reflects, see /thoughts)"},
		{"shift+enter, ctrl+j, \\ enter", "new line"},
		{"↑ ↓, ctrl+p ctrl+n", "input history (kept across runs)"},
		{"ctrl+r", "search the history"},
		{"tab", "complete a command, an argument or an @path"},
		{"ctrl+x", "edit the input in $EDITOR"},
		{"ctrl+o", "show the last tool call or thought in full"},
		{"esc, ctrl+c", "stop the running turn (the session goes on)"},
		{"shift+tab", "cycle the approval mode"},
		{"ctrl+l", "clear the screen"},
		{"ctrl+d", "leave, on an empty line"},
		{"@path", "include a file (or a directory listing)"},
		{"!command", "run a shell command (asks first, as the agent's shell tool does)"},
	}
	var b strings.Builder
	b.WriteString(m.st.accent.Render("keys") + "\n")
	for _, k := range keys {
		b.WriteString(hang(fmt.Sprintf("  %-30s ", k[0]), m.st.dim.Render(k[1]), m.width) + "\n")
	}
	b.WriteString(m.st.accent.Render("commands"))
	rows := m.reg.Rows()
	uw := 0
	for _, r := range rows {
		uw = max(uw, len(r.Usage))
	}
	for _, r := range rows {
		b.WriteString("\n" + hang(fmt.Sprintf("  %-*s  ", uw, r.Usage), m.st.dim.Render(r.Summary), m.width))
	}
	return b.String()
}

// hang writes head then text, wrapping text under itself.
func hang(head, text string, width int) string {
	hw := lipgloss.Width(head)
	if width-hw < 20 {
		return head + text
	}
	wrapped := ansi.Wrap(text, width-hw, "")
	return head + strings.ReplaceAll(wrapped, "\n", "\n"+strings.Repeat(" ", hw))
}

// searchKey handles a key during Ctrl+R.
func (m *Model) searchKey(k tea.KeyPressMsg) tea.Cmd {
	s := m.search
	switch k.String() {
	case "ctrl+r":
		from := s.idx
		if from < 0 {
			from = m.hist.Len()
		}
		m.searchFrom(from)
	case "enter", "tab", "right", "left", "end", "home":
		if s.idx >= 0 {
			m.setInput(m.hist.At(s.idx))
		}
		m.search = nil
	case "esc", "ctrl+g", "ctrl+c":
		m.setInput(s.saved)
		m.search = nil
	case "backspace":
		if s.query != "" {
			_, size := utf8.DecodeLastRuneInString(s.query)
			s.query = s.query[:len(s.query)-size]
			m.searchFrom(m.hist.Len())
		}
	default:
		if k.Text != "" {
			s.query += k.Text
			m.searchFrom(m.hist.Len())
		}
	}
	return nil
}

func (m *Model) searchFrom(before int) {
	if i, ok := m.hist.Search(m.search.query, before); ok {
		m.search.idx = i
	} else if before == m.hist.Len() {
		m.search.idx = -1
	}
}

// refreshMenu recomputes the completions of the input.
func (m *Model) refreshMenu() {
	v := m.input.Value()
	var items []slash.Candidate
	switch {
	case strings.Contains(v, "\n"):
	case strings.HasPrefix(v, "/"):
		items = m.reg.Complete(v, m.values)
	default:
		if i := strings.LastIndexAny(v, " \t"); i+1 < len(v) && v[i+1] == '@' {
			word := v[i+2:]
			for _, f := range m.values(slash.KindFile, word) {
				if strings.HasPrefix(f, word) {
					items = append(items, slash.Candidate{Line: v[:i+2] + f, Label: "@" + f})
				}
			}
		}
	}
	if len(items) == 0 || (len(items) == 1 && items[0].Line == v) {
		m.menu = nil
		return
	}
	if len(items) > 50 {
		items = items[:50]
	}
	m.menu = &menu{items: items}
}

// accept puts the selected completion in the input, and shows what can
// follow it.
func (m *Model) accept() {
	c := m.menu.items[m.menu.sel]
	m.input.SetValue(c.Line)
	m.input.MoveToEnd()
	m.menu = nil
	m.refreshMenu()
}

// values gives completion values for argument kinds.
func (m *Model) values(kind, prefix string) []string {
	switch kind {
	case slash.KindSession:
		list, _ := m.eng.Sessions()
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = s.Name
		}
		return out
	case slash.KindPlugin:
		out := make([]string, len(m.plugins))
		for i, p := range m.plugins {
			out[i] = p.Name
		}
		return out
	case slash.KindModel:
		return m.models
	case slash.KindMode:
		return []string{"default", "auto-edit", "yolo"}
	case slash.KindFile:
		return m.files(prefix)
	}
	return nil
}

// files lists the directory of prefix, for completing a path.
func (m *Model) files(prefix string) []string {
	dir, base := filepath.Split(prefix)
	entries, err := os.ReadDir(m.eng.resolve(orDot(dir)))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if e.IsDir() {
			n += "/"
		}
		out = append(out, dir+n)
	}
	sort.Strings(out)
	if len(out) > 200 {
		out = out[:200]
	}
	return out
}

func orDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// openEditor edits the input in $VISUAL or $EDITOR (vi when neither is set).
func (m *Model) openEditor() tea.Cmd {
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	f, err := os.CreateTemp("", "exocortex-prompt-*.md")
	if err != nil {
		m.setNotice("editor: "+err.Error(), true)
		return nil
	}
	path := f.Name()
	_, werr := f.WriteString(m.expandPastes(m.input.Value()))
	f.Close()
	if werr != nil {
		m.setNotice("editor: "+werr.Error(), true)
		return nil
	}
	args := strings.Fields(editor)
	c := exec.Command(args[0], append(args[1:], path)...)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editorMsg{err: fmt.Errorf("%s: %w (the input is unchanged)", editor, err)}
		}
		b, err := os.ReadFile(path)
		return editorMsg{text: string(b), err: err}
	})
}
