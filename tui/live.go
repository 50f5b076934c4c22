package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/exocortex/exocortex/tui/stream"
)

// liveTurn draws the running turn: the reply being written (headline,
// thoughts, the answer's tail), then a spinner line under it.
func (m *Model) liveTurn() string {
	t := m.turn
	elapsed := m.now().Sub(t.start)
	var status string
	switch {
	case t.canceled:
		status = "Stopping…"
	case t.kind == kindCohesion:
		status = "Reflecting…"
	case t.kind == kindShell:
		status = "Running the command…"
	case len(m.dialogs) > 0:
		status = "Waiting for your answer"
	case t.sub != "":
		status = t.sub + " is working…"
	case t.tool != "" && t.tool != "response":
		status = fmt.Sprintf("Running %s (%.1fs)", t.tool, m.now().Sub(t.toolStart).Seconds())
	case t.reply.Len() == 0 && t.think.Len() > 0:
		status = fmt.Sprintf("Thinking… %s chars", thousands(t.think.Len()))
	case t.reply.Len() == 0:
		status = "Thinking…"
	default:
		status = "Writing…"
	}
	head := m.spin.View() + m.st.accent.Render(status) + m.st.dim.Render(fmt.Sprintf(" %.1fs · esc or ctrl+c stops", elapsed.Seconds()))
	if t.iteration > 1 {
		head += m.st.dim.Render(fmt.Sprintf(" · step %d", t.iteration))
	}
	body := m.liveBody()
	// The body's height only grows during a turn (in steps of 4 lines), so a
	// streamed chunk changes cells, not the area's size.
	// At most half the screen, so a print above it always has room
	// (flush prints in pieces of what the screen leaves).
	limit := max(2, m.height/2-m.chromeHeight())
	if len(body) > limit {
		body = body[len(body)-limit:]
	}
	if len(body) > t.height {
		t.height = min(limit, (len(body)+3)/4*4)
	}
	// The spinner line goes under the text being written, right above the
	// input, so the answer reads on from the printed part to the live part
	// without the spinner between them; the padding that keeps the height
	// goes above the text.
	if pad := t.height - len(body); pad > 0 {
		body = append(make([]string, pad), body...)
	}
	if len(body) == 0 {
		return head
	}
	return strings.Join(body, "\n") + "\n" + head
}

// toolOutputLines is how many of a running tool's last output lines the live
// area shows.
const toolOutputLines = 6

func (m *Model) liveBody() []string {
	t := m.turn
	if t.tool != "" && strings.TrimSpace(t.toolOut) != "" {
		// A tool is running and reports its output: its last lines.
		var lines []string
		for _, l := range lastLines(strings.TrimRight(t.toolOut, "\n"), toolOutputLines) {
			lines = append(lines, m.st.dim.Render("    │ "+clip(l, max(10, m.width-8))))
		}
		return lines
	}
	if now := m.now(); t.reply.Len() != t.parsed && (now.Sub(t.parsedAt) >= liveEvery || t.parsed == 0) {
		t.view = stream.Parse(t.reply.String())
		t.parsed, t.parsedAt = t.reply.Len(), now
	}
	v := t.view
	if t.headShown || t.committed > 0 {
		// Part of the answer is printed: only the open paragraph is live.
		open := ""
		if strings.HasPrefix(v.Text, t.commitSrc) {
			open = v.Text[len(t.commitSrc):]
		}
		if t.liveFrom != t.committed {
			t.live, t.liveFrom = liveMarkdown{}, t.committed
		}
		if strings.TrimSpace(open) == "" {
			return nil
		}
		return strings.Split(t.live.render(m.md, open, m.width, max(4, m.height), m.now()), "\n")
	}
	var lines []string
	w := m.width - 4
	if v.Think != "" && v.Text == "" && len(v.Thoughts) == 0 {
		for _, l := range lastLines(v.Think, 3) {
			lines = append(lines, m.st.dim.Italic(true).Render("  "+clip(l, w)))
		}
	}
	if v.Headline != "" {
		lines = append(lines, m.st.accent.Render("● ")+clip(v.Headline, w))
	}
	for _, th := range lastN(v.Thoughts, 2) {
		lines = append(lines, m.st.dim.Render("  · "+clip(oneLine(th), w)))
	}
	if v.Tool != "" && v.Tool != "response" {
		lines = append(lines, "  "+m.st.accent.Render("⚙ ")+m.st.bold.Render(v.Tool))
		for _, a := range lastN(v.Args, 3) {
			for _, l := range lastLines(a.Key+": "+a.Value, 3) {
				lines = append(lines, m.st.dim.Render("    "+clip(l, w)))
			}
		}
	}
	if v.Text != "" {
		lines = append(lines, strings.Split(t.live.render(m.md, v.Text, m.width, max(4, m.height), m.now()), "\n")...)
	}
	return lines
}

// liveMarkdown renders a growing answer cheaply. The text is cut at its
// last paragraph break outside a code fence: what comes before the cut is
// rendered once, a piece at a time as paragraphs are finished, and kept;
// the open paragraph after it is rendered again at most every liveEvery (the
// spinner's tick catches the last change up). Only as many lines as fit on
// the screen are kept, so the cost of a chunk does not grow with the answer.
// (The finished answer is printed rendered as a whole.)
type liveMarkdown struct {
	blocks           []string // finished paragraphs, rendered
	lines            int      // lines in blocks
	doneLen          int      // bytes of the text the blocks cover
	openSrc, openOut string
	at               time.Time
	width            int
	scan             paraScan
}

// paraScan finds where a growing Markdown text's finished paragraphs end.
type paraScan struct {
	// How far it scanned, inside a fence or not, and the last cut.
	scanned, cut int
	inFence      bool
}

const liveEvery = 50 * time.Millisecond

func (l *liveMarkdown) render(md *markdown, text string, width, maxLines int, now time.Time) string {
	if width != l.width || len(text) < l.scan.scanned {
		*l = liveMarkdown{width: width}
	}
	cut := l.scan.end(text)
	if cut > l.doneLen {
		if src := text[l.doneLen:cut]; strings.TrimSpace(src) != "" {
			out := md.render(tailSource(src, maxLines), width)
			l.blocks = append(l.blocks, out)
			l.lines += strings.Count(out, "\n") + 2
			for len(l.blocks) > 1 && l.lines-strings.Count(l.blocks[0], "\n")-2 >= maxLines {
				l.lines -= strings.Count(l.blocks[0], "\n") + 2
				l.blocks = l.blocks[1:]
			}
		}
		l.doneLen = cut
		l.at = time.Time{} // the open part changed too: render it now
	}
	open := text[cut:]
	if open != l.openSrc && now.Sub(l.at) >= liveEvery {
		l.openSrc, l.at = open, now
		l.openOut = ""
		if strings.TrimSpace(open) != "" {
			l.openOut = md.render(tailSource(open, maxLines), width)
		}
	}
	parts := append([]string(nil), l.blocks...)
	if l.openOut != "" {
		parts = append(parts, l.openOut)
	}
	return strings.Join(lastLines(strings.Join(parts, "\n\n"), maxLines), "\n")
}

// end is the offset after the last blank line of text that is not
// inside a code fence (0 when there is none). It scans on from where the
// previous call stopped: the text only grows.
func (l *paraScan) end(text string) int {
	for l.next(text) >= 0 {
	}
	return l.cut // the last line is still being written
}

// next scans on to the next cut and returns it, or -1 when text has no
// further complete blank line outside a fence.
func (l *paraScan) next(text string) int {
	if l.scanned > len(text) {
		l.scanned, l.inFence, l.cut = 0, false, 0
	}
	for {
		i := strings.IndexByte(text[l.scanned:], '\n')
		if i < 0 {
			return -1
		}
		line := strings.TrimSpace(text[l.scanned : l.scanned+i])
		l.scanned += i + 1
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			l.inFence = !l.inFence
		}
		if !l.inFence && line == "" {
			l.cut = l.scanned
			return l.cut
		}
	}
}

func lastN[T any](xs []T, n int) []T {
	if len(xs) > n {
		return xs[len(xs)-n:]
	}
	return xs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
