package tui

import (
	"fmt"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/tui/transcript"
)

// printResumed prints the end of a resumed session's conversation as it was
// shown: the prompts as typed, the steps (headlines, tool calls that /expand
// opens, the core's corrections), the answers, and the part of an answer
// that streamed before its turn was stopped or the process killed.
func (m *Model) printResumed(msgs []*exocortexv1.Message) {
	turns, thoughts := transcript.Build(msgs)
	shown := map[int]shownRecord{}
	if s := m.eng.Session(); s != nil {
		shown = readShown(shownPath(s.Path()))
	}
	const show = 10
	head := fmt.Sprintf("resumed: %s, %s", plural(len(turns), "turn"), plural(len(msgs), "message"))
	if len(thoughts) > 0 {
		head += ", " + plural(len(thoughts), "thought")
	}
	first := 0
	if len(turns) > show {
		head += fmt.Sprintf(" · the last %d below (/export md FILE has all)", show)
		first = len(turns) - show
	}
	m.print(m.st.dim.Render(head))
	for i := first; i < len(turns); i++ {
		m.printResumedTurn(turns[i], shown[i])
	}
}

func (m *Model) printResumedTurn(t transcript.Turn, sh shownRecord) {
	for _, c := range sh.Shell {
		m.print(m.st.accent.Render("! ") + m.st.bold.Render(c) + m.st.dim.Render("  (its output went with the message below)"))
	}
	prompt := strings.TrimSpace(t.Prompt.GetContent())
	if sh.Display != "" {
		prompt = sh.Display
	}
	m.echoResumed(prompt)
	for _, s := range t.Steps {
		if s.Headline != "" {
			m.print(m.st.accent.Render("● ") + s.Headline)
		}
		switch {
		case s.Tool != "":
			n := len(m.tools) + 1
			m.tools = append(m.tools, toolRecord{n: n, tool: s.Tool, args: s.Args, result: s.Result, done: s.HasResult})
			m.print(fmt.Sprintf("  %s %s %s", m.st.accent.Render("⚙"), m.st.bold.Render(s.Tool), m.st.dim.Render(clip(compactArgs([]byte(s.Args)), max(20, m.width-len(s.Tool)-8)))))
			if s.HasResult {
				m.print(m.resultLine(s.Result, "", n))
			} else {
				m.print(m.st.dim.Render("    ⎿ (no result: the turn ended before it came)"))
			}
		case s.Signal != "":
			first, _, _ := strings.Cut(strings.TrimSpace(s.Note), "\n")
			m.print(m.st.warn.Render("  ↺ "+s.Signal) + m.st.dim.Render(": "+clip(first, max(20, m.width-len(s.Signal)-8))))
		}
	}
	switch {
	case t.Answer != "":
		m.printMarkdown(t.Answer)
	case sh.Partial != "":
		if sh.Headline != "" {
			m.print(m.st.accent.Render("● ") + sh.Headline)
		}
		m.printMarkdown(sh.Partial)
		why := "the process ended"
		if sh.Stopped {
			why = "stopped (ctrl+c)"
		}
		m.print(m.st.warn.Render("  ⏹ " + why + " before the answer was complete"))
	default:
		m.print(m.st.dim.Render("  (no answer)"))
	}
}

// echoResumed prints a prompt as echo does, a "(with …)" line dim.
func (m *Model) echoResumed(text string) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		switch {
		case i == 0:
			lines[i] = m.st.prompt.Render("› ") + m.st.bold.Render(l)
		case strings.HasPrefix(l, "(with "):
			lines[i] = m.st.dim.Render(l)
		default:
			lines[i] = "  " + m.st.bold.Render(l)
		}
	}
	m.print("\n" + strings.Join(lines, "\n"))
}
