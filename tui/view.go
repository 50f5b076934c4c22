package tui

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
)

// View draws the live area: the welcome card while starting, the running
// turn, an approval dialog, the input with its menu, and the status line.
func (m *Model) View() tea.View {
	if !m.cfg.Fullscreen && (!m.sized || m.quitting) {
		// Leaving, the live area (the input box, the status line) is
		// erased: the last frame stays on the terminal after the program,
		// and the goodbye line is the session's last word.
		return tea.NewView("")
	}
	var parts []string
	if !m.boot.welcomed {
		parts = append(parts, m.welcomeCard())
	}
	if m.turn != nil {
		parts = append(parts, m.liveTurn())
	}
	for _, q := range m.queue {
		parts = append(parts, m.st.dim.Render("⏳ "+clip(oneLine(q.display), m.width-4)))
	}
	bottom := m.bottom()
	top := strings.Join(parts, "\n")
	var content string
	var above int
	if m.cfg.Fullscreen {
		bh := lipgloss.Height(bottom)
		th := 0
		if top != "" {
			th = lipgloss.Height(top)
		}
		m.vp.SetHeight(max(1, m.height-bh-th))
		if !m.scrolled {
			m.vp.GotoBottom()
		}
		content = m.vp.View()
		if top != "" {
			content += "\n" + top
		}
		above = lipgloss.Height(content)
		content += "\n" + bottom
	} else {
		if top != "" {
			content = top + "\n"
			above = lipgloss.Height(top)
		}
		content += bottom
	}
	if m.reflowing {
		content += "\n"
	}
	v := tea.NewView(content)
	if !m.cfg.Fullscreen {
		m.noteFrame(strings.Count(content, "\n") + 1)
	}
	v.AltScreen = m.cfg.Fullscreen
	if m.cfg.Fullscreen {
		v.MouseMode = tea.MouseModeCellMotion // the wheel scrolls the transcript
	}
	v.WindowTitle = "exocortex"
	if s := m.eng.Session(); s != nil {
		v.WindowTitle = "exocortex · " + s.Name()
	}
	if len(m.dialogs) == 0 && m.search == nil && !m.quitting {
		if c := m.input.Cursor(); c != nil {
			c.Y += above + 1 // the rule above the input
			v.Cursor = c
		}
	}
	return v
}

// bottom is the input area: a dialog or the input (or the search line), the
// completion menu, and the status line. It is drawn again only when what it
// shows changed: a streamed chunk redraws the turn above it, not the input.
func (m *Model) bottom() string {
	key := m.bottomKey()
	if key == m.bottomCache.key {
		return m.bottomCache.out
	}
	out := m.drawBottom()
	m.bottomCache.key, m.bottomCache.out = key, out
	return out
}

// bottomKey is everything the input area depends on.
func (m *Model) bottomKey() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%d|%d|%d|%t|%s|", m.width, m.height, m.input.Line(), m.input.Column(), m.quitting, m.input.Value())
	if m.menu != nil {
		fmt.Fprintf(&b, "m%p.%d|", m.menu, m.menu.sel)
	}
	if m.search != nil {
		fmt.Fprintf(&b, "s%s.%d|", m.search.query, m.search.idx)
	}
	if len(m.dialogs) > 0 {
		fmt.Fprintf(&b, "d%p.%d|", m.dialogs[0], m.dialogs[0].sel)
	}
	if m.notice != "" && m.now().Sub(m.noticeT) < 8*time.Second {
		fmt.Fprintf(&b, "n%t%s|", m.noticeE, m.notice)
	}
	sess := ""
	if s := m.eng.Session(); s != nil {
		sess = s.Name()
	}
	var plugins *host.PluginStatus
	if len(m.plugins) > 0 {
		plugins = &m.plugins[0]
	}
	fmt.Fprintf(&b, "%s|%s|%t%t|%.3f|%.0f|%s|%s|%t%t|%p.%d", m.retryStatus(), m.eng.Model(), m.boot.probeDone, m.boot.probeErr != nil,
		m.lastCtx, m.lastTPS, m.eng.Mode(), sess, m.boot.hostDone, m.boot.hostErr != nil, plugins, len(m.plugins))
	return b.String()
}

func (m *Model) drawBottom() string {
	rule := m.st.rule.Render(strings.Repeat("─", m.width))
	var b strings.Builder
	if len(m.dialogs) > 0 {
		b.WriteString(m.dialogView(m.dialogs[0]))
		b.WriteString("\n" + m.statusLine())
		return b.String()
	}
	b.WriteString(rule + "\n")
	if m.search != nil {
		match := ""
		if m.search.idx >= 0 {
			match = oneLine(m.hist.At(m.search.idx))
		} else if m.search.query != "" {
			match = m.st.err.Render("no match")
		}
		b.WriteString(m.st.accent.Render("(reverse search) ") + m.search.query + m.st.dim.Render(" ↦ ") + clip(match, max(10, m.width-len(m.search.query)-24)))
	} else {
		b.WriteString(m.input.View())
	}
	b.WriteString("\n" + rule)
	if m.menu != nil {
		b.WriteString("\n" + m.menuView())
	}
	b.WriteString("\n" + m.statusLine())
	if m.notice != "" && m.now().Sub(m.noticeT) < 8*time.Second {
		st := m.st.dim
		if m.noticeE {
			st = m.st.err
		}
		b.WriteString("\n" + st.Render(clip(m.notice, m.width)))
	}
	return b.String()
}

// chromeHeight is the height of everything below the live turn area.
func (m *Model) chromeHeight() int {
	h := 4 + m.input.Height()
	if m.menu != nil {
		h += min(len(m.menu.items), 8)
	}
	return h
}

func (m *Model) menuView() string {
	const show = 8
	items := m.menu.items
	start := 0
	if m.menu.sel >= show {
		start = m.menu.sel - show + 1
	}
	end := min(len(items), start+show)
	labelW := 0
	for _, it := range items[start:end] {
		labelW = max(labelW, lipgloss.Width(it.Label))
	}
	labelW = min(labelW, m.width/2)
	var lines []string
	for i := start; i < end; i++ {
		it := items[i]
		label := fmt.Sprintf("%-*s", labelW, clip(it.Label, labelW))
		line := "  " + label
		if it.Summary != "" {
			line += "  " + clip(it.Summary, max(10, m.width-labelW-6))
		}
		if i == m.menu.sel {
			lines = append(lines, m.st.menuSel.Render("›"+line[1:]))
		} else {
			lines = append(lines, m.st.menu.Render(line))
		}
	}
	if len(items) > end {
		lines = append(lines, m.st.dim.Render(fmt.Sprintf("  … %d more", len(items)-end)))
	}
	return strings.Join(lines, "\n")
}

// statusLine: model, context fill, speed, plugin health, an extension over
// its time budget, approval mode, session.
func (m *Model) statusLine() string {
	sep := m.st.dim.Render(" · ")
	var parts []string
	model := m.eng.Model()
	switch {
	case m.boot.probeDone && m.boot.probeErr != nil:
		parts = append(parts, m.st.err.Render(model+" ✗"))
	default:
		parts = append(parts, m.st.accent.Render(model))
	}
	fill := m.lastCtx
	ctxSt := m.st.dim
	switch {
	case fill >= 0.9:
		ctxSt = m.st.err
	case fill >= 0.7:
		ctxSt = m.st.warn
	}
	if r := m.retryStatus(); r != "" {
		parts = append(parts, r)
	}
	parts = append(parts, ctxSt.Render(fmt.Sprintf("ctx %.0f%%", fill*100)))
	if m.lastTPS > 0 {
		parts = append(parts, m.st.dim.Render(fmt.Sprintf("%.0f tok/s", m.lastTPS)))
	}
	parts = append(parts, m.pluginHealth())
	if slow := m.slowStatus(); slow != "" {
		parts = append(parts, slow)
	}
	mode := string(m.eng.Mode())
	if mode == "auto_edit" {
		mode = "auto-edit"
	}
	modeSt := m.st.dim
	if mode == "yolo" {
		modeSt = m.st.warn
	}
	parts = append(parts, modeSt.Render(mode))
	if s := m.eng.Session(); s != nil {
		parts = append(parts, m.st.dim.Render(s.Name()))
	}
	line := strings.Join(parts, sep)
	if lipgloss.Width(line) > m.width {
		// Drop from the right until it fits.
		for len(parts) > 1 && lipgloss.Width(strings.Join(parts, sep)) > m.width {
			parts = parts[:len(parts)-1]
		}
		line = strings.Join(parts, sep)
	}
	return line
}

// pluginHealth is "plugins 3/3" in green, or what is wrong.
func (m *Model) pluginHealth() string {
	if !m.boot.hostDone {
		return m.st.dim.Render("plugins starting…")
	}
	if m.boot.hostErr != nil {
		return m.st.err.Render("plugins ✗")
	}
	running, bad := 0, 0
	for _, p := range m.plugins {
		switch p.State {
		case host.StateRunning:
			running++
		case host.StateStopped:
			// A stopped plugin restarts on its next use: not a fault.
			running++
		default:
			bad++
		}
	}
	total := len(m.plugins)
	text := fmt.Sprintf("plugins %d/%d", running, total)
	switch {
	case bad > 0:
		return m.st.err.Render(text + " ✗")
	case total == 0:
		return m.st.dim.Render("no plugins")
	}
	return m.st.ok.Render(text)
}

// welcomeCard shows the model, the server and whether it answered, the
// plugins and their health, the memory's size and the keys; what is still
// being found out shows a spinner.
func (m *Model) welcomeCard() string { return m.welcomeCardAt(m.width) }

// welcomeCardAt is the welcome card laid out for width columns.
func (m *Model) welcomeCardAt(width int) string {
	w := min(width, 100)
	inner := w - 4
	label := func(s string) string { return m.st.dim.Render(fmt.Sprintf("%-8s ", s)) }
	pending := func(s string) string { return m.spin.View() + " " + m.st.dim.Render(s) }
	var b strings.Builder
	title := m.st.accent.Render("◆ Exocortex")
	if s := m.cfg.Session; s != "" {
		kind := "new session"
		if m.cfg.Resumed {
			kind = "resumed session"
		}
		title += m.st.dim.Render(" · "+kind+" ") + s
	}
	b.WriteString(title + "\n\n")

	model := m.eng.Model()
	if m.cfg.Scripted != "" {
		model += m.st.dim.Render(" (scripted: " + strings.TrimPrefix(m.cfg.Scripted, "script:") + ")")
	}
	b.WriteString(label("model") + model + "\n")
	b.WriteString(label(m.cfg.provider()) + m.cfg.Address + "  ")
	switch {
	case !m.boot.probeDone:
		b.WriteString(pending("asking…"))
	case m.boot.probeErr == nil:
		info := m.boot.info
		b.WriteString(m.st.ok.Render("✓ answered"))
		if info.Version != "" {
			b.WriteString(m.st.dim.Render(" (Ollama " + info.Version + ")"))
		}
		if model := m.eng.Model(); m.cfg.Scripted == "" && !hasModel(info.Models, model) {
			// The server answered /api/show, but its list (/api/tags) does
			// not have the model: a chat would fail or start a download.
			b.WriteString("\n" + label("") + m.st.warn.Render("✗ "+model+" is not among the server's models; download it with: ollama pull "+model))
		}
		if info.ContextLength > 0 && m.cfg.NumCtx > info.ContextLength {
			b.WriteString("\n" + label("") + m.st.warn.Render(fmt.Sprintf("num_ctx %d is above the model's trained context (%d)", m.cfg.NumCtx, info.ContextLength)))
		}
	default:
		b.WriteString(m.st.err.Render("✗ " + probeProblem(m.boot.probeErr)))
		b.WriteString("\n" + label("") + m.st.warn.Render(probeFix(m.cfg.provider(), m.boot.probeErr, m.eng.Model())))
	}
	b.WriteString("\n" + label("plugins"))
	switch {
	case !m.boot.hostDone:
		b.WriteString(pending("starting…"))
	case m.boot.hostErr != nil:
		b.WriteString(m.st.err.Render("✗ " + clip(oneLine(m.boot.hostErr.Error()), inner*2)))
	default:
		b.WriteString(m.pluginList(inner - 9))
		if w := m.eng.WindowWarning(); w != "" {
			b.WriteString("\n" + label("") + m.st.warn.Render(clip(w, inner*2)))
		}
		for _, bn := range m.eng.ShownBanners() {
			b.WriteString("\n" + label("") + m.st.warn.Render(clip(oneLine(bannerLine(bn)), inner*3)))
		}
		if w := m.eng.SandboxWarning(); w != "" {
			b.WriteString("\n" + label("") + m.st.warn.Render(clip(w, inner*3)))
		}
		if h := m.eng.Host(); h != nil {
			for _, n := range h.Notices() {
				b.WriteString("\n" + label("") + m.st.warn.Render(clip(oneLine(n), inner*2)))
			}
		}
		for _, p := range m.problems {
			b.WriteString("\n" + label("") + m.st.warn.Render(clip(oneLine(p), inner*3)))
		}
		if m.boot.agentErr != nil {
			b.WriteString("\n" + label("") + m.st.err.Render("✗ "+clip(oneLine(m.boot.agentErr.Error()), inner*2)))
		}
	}
	b.WriteString("\n" + label("memory"))
	switch {
	case !m.boot.memDone:
		b.WriteString(pending("counting…"))
	default:
		b.WriteString(m.boot.memory)
	}
	if m.boot.sessErr != nil {
		b.WriteString("\n" + label("session") + m.st.err.Render("✗ "+oneLine(m.boot.sessErr.Error())))
		b.WriteString("\n" + label("") + m.st.warn.Render("/new opens a fresh session, /sessions lists the others"))
	}
	body := hangFields(b.String(), inner)
	body += "\n\n" + m.st.dim.Render("enter send · shift+enter or ctrl+j new line · / commands · @file · !shell")
	body += "\n" + m.st.dim.Render("↑↓ history · ctrl+r search · ctrl+c stop · ctrl+d quit · /help")
	return m.st.card.Width(w).Render(body)
}

// labelWidth is the width of a welcome card's label column ("memory   ").
const labelWidth = 9

// cardLabel matches a card line's label column, stripped of styles.
var cardLabel = regexp.MustCompile(`^[a-z]* *$`)

// hangFields wraps the card's labelled lines that are wider than width under
// their value, not back at the card's edge: a long address, notice or
// memory line stays in the value column.
func hangFields(body string, width int) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		if lipgloss.Width(l) <= width {
			continue
		}
		head := ansi.Truncate(l, labelWidth, "")
		if plain := ansi.Strip(head); len(plain) != labelWidth || !cardLabel.MatchString(plain) || !strings.HasSuffix(plain, " ") {
			continue
		}
		lines[i] = hang(head, ansi.TruncateLeft(l, labelWidth, ""), width)
	}
	return strings.Join(lines, "\n")
}

// pluginList is the plugins with a mark each, wrapped to width.
func (m *Model) pluginList(width int) string {
	if len(m.plugins) == 0 {
		return m.st.dim.Render("none loaded")
	}
	var items []string
	for _, p := range m.plugins {
		switch p.State {
		case host.StateRunning, host.StateStopped:
			items = append(items, m.st.ok.Render("✓ ")+p.Name)
		default:
			items = append(items, m.st.err.Render("✗ "+p.Name+" ("+string(p.State)+")"))
		}
	}
	var lines []string
	cur := ""
	for _, it := range items {
		if cur != "" && lipgloss.Width(cur)+2+lipgloss.Width(it) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += "  "
		}
		cur += it
	}
	lines = append(lines, cur)
	out := strings.Join(lines, "\n"+strings.Repeat(" ", 9))
	if m.failed > 0 {
		out += "\n" + strings.Repeat(" ", 9) + m.st.err.Render(fmt.Sprintf("%d failed to start: /plugins status", m.failed))
	}
	return out
}

func probeProblem(err error) string {
	switch {
	case errors.Is(err, llm.ErrUnreachable):
		return "nothing answered"
	case errors.Is(err, llm.ErrModelNotFound):
		return "answered, but has no such model"
	case errors.Is(err, llm.ErrUnauthorized):
		return "refused the API key"
	}
	return clip(oneLine(err.Error()), 80)
}

func probeFix(provider string, err error, model string) string {
	if provider == llm.ProviderOpenAI {
		switch {
		case errors.Is(err, llm.ErrUnreachable):
			return "start the server (LM Studio, llama-server, vllm serve) or set openai.base_url; commands work meanwhile"
		case errors.Is(err, llm.ErrModelNotFound):
			return "load it in the server, or choose one it has with /model NAME (/model lists them)"
		case errors.Is(err, llm.ErrUnauthorized):
			return clip(oneLine(err.Error()), 200)
		}
	}
	switch {
	case errors.Is(err, llm.ErrUnreachable):
		return "start it with: ollama serve  (then: ollama pull " + model + "); commands work meanwhile"
	case errors.Is(err, llm.ErrModelNotFound):
		return "download it with: ollama pull " + model + "  (or /model NAME)"
	}
	return clip(oneLine(err.Error()), 200)
}

// hasModel reports whether the server's list (/api/tags) has model, with
// or without its ":latest" tag.
func hasModel(list []string, model string) bool {
	canon := func(s string) string {
		if !strings.Contains(s, ":") {
			return s + ":latest"
		}
		return s
	}
	for _, l := range list {
		if canon(l) == canon(model) {
			return true
		}
	}
	return false
}
