package tui

import (
	tea "charm.land/bubbletea/v2"
)

// The plugins' problems the host does not know of (Config.Problems): an MCP
// server of the mcp-servers plugin that failed to start, crashed or hangs.
// Those found when the plugins are up are on the welcome card, beside the
// host's notices (a slow plugin start, a plugin kept out); each one found
// later, at a status tick, is a transcript line, as a hook's failure is.

// problemsMsg carries the problems read at a status tick.
type problemsMsg struct{ lines []string }

// startProblems keeps the problems found at start for the welcome card.
func (m *Model) startProblems(lines []string) {
	for _, l := range lines {
		if !m.problemShown(l) {
			m.problems = append(m.problems, l)
		}
	}
}

// problemShown marks l shown and reports whether it was already.
func (m *Model) problemShown(l string) bool {
	if m.problemsShown == nil {
		m.problemsShown = map[string]bool{}
	}
	seen := m.problemsShown[l]
	m.problemsShown[l] = true
	return seen
}

// readProblems reads the problems off the UI goroutine (nil: none to read).
func (m *Model) readProblems() tea.Cmd {
	if m.eng.Config().Problems == nil {
		return nil
	}
	eng := m.eng
	return func() tea.Msg { return problemsMsg{lines: eng.Problems()} }
}

// problemsFound prints each problem not shown yet as a transcript line;
// before the welcome card they wait for it.
func (m *Model) problemsFound(lines []string) {
	if !m.boot.welcomed {
		m.startProblems(lines)
		return
	}
	for _, l := range lines {
		if !m.problemShown(l) {
			m.note(m.st.warn, "!", l)
		}
	}
}
