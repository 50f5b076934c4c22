package tui

import (
	"strings"
	"testing"

	"github.com/exocortex/exocortex/tui/slash"
)

// TestContextShowsTheSummaryFirst: /context is the window's summary alone,
// with a pointer to the JSON; /context json has the summary first, then the
// context object.
func TestContextShowsTheSummaryFirst(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "ctx", answer("done"))
	u := start(t, eng)
	u.submit("hello")
	u.idle()
	u.waitPrinted("done")
	run := func(line string) string {
		t.Helper()
		out, err := eng.Exec(t.Context(), mustParse(t, line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return out.Text
	}
	short := run("/context")
	if !strings.HasPrefix(short, "window ") || strings.Contains(short, `"sessionId"`) || !strings.Contains(short, "/context json") {
		t.Errorf("/context:\n%s", short)
	}
	if n := strings.Count(short, "\n") + 1; n > 16 {
		t.Errorf("/context is %d lines, want the summary alone", n)
	}
	full := run("/context json")
	if !strings.HasPrefix(full, "window ") || !strings.Contains(full, `"sessionId"`) || strings.Index(full, "window ") > strings.Index(full, "{") {
		t.Errorf("/context json:\n%.600s", full)
	}
	if _, err := eng.Exec(t.Context(), mustParse(t, "/context yaml")); err == nil || !strings.Contains(err.Error(), "/context json") {
		t.Errorf("/context yaml: %v", err)
	}
}

func mustParse(t *testing.T, line string) slash.Invocation {
	t.Helper()
	in, err := Commands().Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	return in
}
