package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/exocortex/exocortex/core/loop"
)

// approvalMsg asks the operator about a held tool call. The loop's goroutine
// waits on reply; the dialog answers it exactly once.
type approvalMsg struct {
	req   loop.Approval
	reply chan loop.Decision
}

// approverFunc is the loop.Approver of the terminal: it queues the request
// for the model and blocks the asking goroutine (the agent loop, or a
// !command) until the operator answers or ctx ends.
func approverFunc(box *inbox) loop.Approver {
	return loop.ApproverFunc(func(ctx context.Context, req loop.Approval) (loop.Decision, error) {
		reply := make(chan loop.Decision, 1)
		box.push(approvalMsg{req: req, reply: reply})
		select {
		case d := <-reply:
			return d, nil
		case <-ctx.Done():
			return loop.Deny, ctx.Err()
		}
	})
}

// dialog is an approval waiting for the operator.
type dialog struct {
	req      loop.Approval
	reply    chan loop.Decision
	sel      int
	answered bool
}

var choices = []struct {
	d     loop.Decision
	label string
	key   string
}{
	{loop.AllowOnce, "Allow once", "y"},
	{loop.AllowSession, "Allow for this session", "a"},
	{loop.Deny, "Deny", "n"},
}

func (d *dialog) answer(dec loop.Decision) {
	if d.answered {
		return
	}
	d.answered = true
	d.reply <- dec // buffered: never blocks
}

// dialogKey handles a key while a dialog is open; it returns true when the
// dialog closed.
func (m *Model) dialogKey(k tea.KeyPressMsg) tea.Cmd {
	d := m.dialogs[0]
	choose := func(i int) tea.Cmd {
		d.answer(choices[i].d)
		m.dialogs = m.dialogs[1:]
		return nil
	}
	switch s := k.String(); s {
	case "1", "2", "3":
		return choose(int(s[0] - '1'))
	case "y":
		return choose(0)
	case "a":
		return choose(1)
	case "n", "esc":
		return choose(2)
	case "left", "up", "shift+tab", "k", "h":
		d.sel = (d.sel + len(choices) - 1) % len(choices)
	case "right", "down", "tab", "j", "l":
		d.sel = (d.sel + 1) % len(choices)
	case "enter":
		return choose(d.sel)
	case "ctrl+c":
		// Deny and stop the turn: the operator wants out.
		choose(2)
		return m.cancelTurn()
	}
	return nil
}

// dialogView draws the dialog: the exact action, who held it and why, and
// the three answers.
func (m *Model) dialogView(d *dialog) string {
	w := min(m.width, 100) - 4
	var b strings.Builder
	title := "Approval needed"
	if d.req.Tool != "" {
		title += " · " + d.req.Tool
	}
	b.WriteString(m.st.warn.Bold(true).Render(title) + "\n")
	// The action and the reason are wrapped, never cut: they are what the
	// operator decides on. Only an action taller than the screen leaves.
	lines := strings.Split(ansi.Wrap(strings.TrimRight(d.req.Action, "\n"), w-2, "/"), "\n")
	if most := max(6, m.height-12); len(lines) > most {
		lines = append(lines[:most-1], fmt.Sprintf("… %d more lines (the whole action is in the session's log)", len(lines)-most+1))
	}
	for _, l := range lines {
		b.WriteString("  " + m.st.bold.Render(l) + "\n")
	}
	why := d.req.Reason
	if d.req.Extension != "" {
		why = "held by " + d.req.Extension
		if d.req.Reason != "" {
			why += ": " + d.req.Reason
		}
	}
	if why != "" {
		b.WriteString(m.st.dim.Render(ansi.Wrap(why, w, "/")) + "\n")
	}
	var opts []string
	for i, c := range choices {
		label := fmt.Sprintf("%d %s (%s)", i+1, c.label, c.key)
		if i == d.sel {
			opts = append(opts, m.st.menuSel.Render("› "+label))
		} else {
			opts = append(opts, m.st.dim.Render("  "+label))
		}
	}
	// The answers side by side when they fit, else one a line.
	if row := strings.Join(opts, "   "); lipgloss.Width(row) <= w {
		b.WriteString(row)
	} else {
		b.WriteString(strings.Join(opts, "\n"))
	}
	return m.st.dialog.Width(min(m.width, 100)).Render(b.String())
}
