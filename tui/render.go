package tui

import (
	"os"
	"regexp"
	"strings"

	"charm.land/glamour/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// styles are the session's colours. They use the terminal's own 16 colours,
// so they follow its theme, light or dark.
type styles struct {
	accent, dim, ok, warn, err, bold, prompt, card, dialog, menuSel, menu, rule lipgloss.Style
}

func newStyles() styles {
	return styles{
		accent:  lipgloss.NewStyle().Foreground(lipgloss.Cyan).Bold(true),
		dim:     lipgloss.NewStyle().Foreground(lipgloss.BrightBlack),
		ok:      lipgloss.NewStyle().Foreground(lipgloss.Green),
		warn:    lipgloss.NewStyle().Foreground(lipgloss.Yellow),
		err:     lipgloss.NewStyle().Foreground(lipgloss.Red),
		bold:    lipgloss.NewStyle().Bold(true),
		prompt:  lipgloss.NewStyle().Foreground(lipgloss.Cyan).Bold(true),
		card:    lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Cyan).Padding(0, 1),
		dialog:  lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Yellow).Padding(0, 1),
		menuSel: lipgloss.NewStyle().Foreground(lipgloss.Cyan).Bold(true),
		menu:    lipgloss.NewStyle().Foreground(lipgloss.BrightBlack),
		rule:    lipgloss.NewStyle().Foreground(lipgloss.BrightBlack),
	}
}

// markdown renders Markdown for the terminal with glamour (code blocks
// highlighted). A renderer is built per width and style and kept: building
// one parses its style sheet.
type markdown struct {
	style string
	width int
	r     *glamour.TermRenderer
}

// newMarkdown uses GLAMOUR_STYLE when set, else the dark style until the
// terminal says its background is light.
func newMarkdown() *markdown {
	style := os.Getenv("GLAMOUR_STYLE")
	if style == "" {
		style = "dark"
	}
	return &markdown{style: style}
}

func (md *markdown) setStyle(style string) {
	if os.Getenv("GLAMOUR_STYLE") != "" || style == md.style {
		return
	}
	md.style, md.r = style, nil
}

// render returns src rendered to width columns, without the blank lines
// glamour puts around a document. When rendering fails the source is shown
// as it is: the operator still reads the answer.
func (md *markdown) render(src string, width int) string {
	width = max(width, 20)
	if md.r == nil || md.width != width {
		r, err := glamour.NewTermRenderer(glamour.WithStylePath(md.style), glamour.WithWordWrap(width-4), glamour.WithPreservedNewLines())
		if err != nil {
			return src
		}
		md.r, md.width = r, width
	}
	out, err := md.r.Render(src)
	if err != nil {
		return src
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = trimStyledRight(l)
	}
	// glamour puts blank lines around a document, some of them only style
	// codes ("\x1b[m"): they go, so that a block printed on its own after
	// one blank line (printMarkdown) stands as it does within the whole.
	for len(lines) > 0 && blank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// blank reports whether a rendered line shows nothing.
func blank(line string) bool { return strings.TrimSpace(ansi.Strip(line)) == "" }

// paragraphs splits Markdown at its blank lines outside code fences, the
// cuts the streamed answer is printed at (paraScan), dropping what is only
// blank. An answer is printed a paragraph at a time whether it streamed or
// is replayed, so both show the same lines.
func paragraphs(src string) []string {
	var out []string
	var scan paraScan
	start := 0
	for {
		cut := scan.next(src)
		if cut < 0 {
			break
		}
		if p := src[start:cut]; strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
		start = cut
	}
	if p := src[start:]; strings.TrimSpace(p) != "" {
		out = append(out, p)
	}
	return out
}

// styledTail matches the end of a line that is only spaces and SGR codes.
var styledTail = regexp.MustCompile(`(?:\x1b\[[0-9;]*m| )+$`)

// trimStyledRight drops the padding glamour adds to every line (spaces, each
// in its own style), which would otherwise be copied out of the terminal and
// cost a redraw per cell.
func trimStyledRight(line string) string {
	loc := styledTail.FindStringIndex(line)
	if loc == nil {
		return line
	}
	tail := line[loc[0]:]
	line = line[:loc[0]]
	if strings.Contains(tail, "\x1b[") {
		line += "\x1b[m"
	}
	return line
}

// tailSource returns the end of a Markdown text that renders to about
// maxLines lines: it cuts at a paragraph break outside code fences, so the
// streamed tail renders as it will in full (a cut inside a fence reopens it).
// Rendering only the tail keeps the cost of a streamed chunk flat however
// long the answer grows.
func tailSource(src string, maxLines int) string {
	lines := strings.Split(src, "\n")
	if len(lines) <= maxLines*2 {
		return src
	}
	// Track fences from the start to know which breaks are outside them.
	inFence := false
	fenceOpen := ""
	cut, cutFence := 0, ""
	limit := len(lines) - maxLines*2
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			if !inFence {
				inFence, fenceOpen = true, l
			} else {
				inFence = false
			}
		}
		if i >= limit {
			break
		}
		if !inFence && t == "" {
			cut, cutFence = i+1, ""
		} else if inFence && i+1 <= limit {
			// A cut inside a fence reopens it, so the rest still renders as code.
			cut, cutFence = i+1, fenceOpen
		}
	}
	tail := strings.Join(lines[cut:], "\n")
	if cutFence != "" {
		tail = strings.TrimSpace(cutFence) + "\n" + tail
	}
	return tail
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}
