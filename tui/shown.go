package tui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// The session's messages are what the model saw. What the terminal showed
// has a little more, which a resumed session draws again: how a prompt was
// typed (an @file reference rather than the file's text, the !commands whose
// output went with it) and the part of an answer that streamed before the
// turn was stopped or the process killed. That goes to a file beside the
// session's, one JSON line per fact; a later line for the same turn adds to
// or replaces an earlier one.

// shownRecord is one line of the file: turn is the operator turn's index in
// the session (transcript.Build's order).
type shownRecord struct {
	Turn    int      `json:"turn"`
	Display string   `json:"display,omitempty"`
	Shell   []string `json:"shell,omitempty"`
	Partial string   `json:"partial,omitempty"`
	// Headline is the headline of the reply Partial belongs to.
	Headline string `json:"headline,omitempty"`
	Stopped  bool   `json:"stopped,omitempty"`
}

// shownPath is the file beside the session file at sessionPath.
func shownPath(sessionPath string) string { return sessionPath + ".shown" }

// appendShown adds r to the file at path. The line is written whole with
// one write, so a process killed after it returns loses nothing.
func appendShown(path string, r shownRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding what was shown: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("recording what was shown in %s: %w", path, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("recording what was shown in %s: %w", path, err)
	}
	return f.Close()
}

// readShown reads the file at path, merged by turn. A missing file is an
// empty record; a line that does not parse (a torn last line) is skipped.
func readShown(path string) map[int]shownRecord {
	out := map[int]shownRecord{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r shownRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		cur := out[r.Turn]
		cur.Turn = r.Turn
		if r.Display != "" {
			cur.Display = r.Display
		}
		if len(r.Shell) > 0 {
			cur.Shell = r.Shell
		}
		if r.Partial != "" {
			cur.Partial = r.Partial
		}
		if r.Headline != "" {
			cur.Headline = r.Headline
		}
		cur.Stopped = cur.Stopped || r.Stopped
		out[r.Turn] = cur
	}
	return out
}

// recordShown appends r to the open session's file. A failure is said once
// on the status line: the session itself is unaffected.
func (m *Model) recordShown(r shownRecord) {
	s := m.eng.Session()
	if s == nil {
		return
	}
	if err := appendShown(shownPath(s.Path()), r); err != nil && !m.shownErr {
		m.shownErr = true
		m.setNotice(err.Error()+" (a resumed session will show less)", true)
	}
}

// keepPartial records the answer streamed so far, at most once a second
// unless force.
func (m *Model) keepPartial(text string, force bool) {
	t := m.turn
	if t == nil || t.kind != kindPrompt || t.index < 0 || strings.TrimSpace(text) == "" || len(text) == t.keptLen {
		return
	}
	if now := m.now(); force || now.Sub(t.keptAt) >= keepEvery {
		t.keptAt, t.keptLen = now, len(text)
		m.recordShown(shownRecord{Turn: t.index, Partial: text, Headline: t.view.Headline})
	}
}
