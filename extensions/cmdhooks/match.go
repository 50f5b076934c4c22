package cmdhooks

import (
	"fmt"
	"regexp"
	"strings"
)

// A matcher selects the calls a hook runs for, as Claude Code, Gemini CLI
// and Codex define it: empty or "*" matches everything; a name made of
// letters, digits and "_" only, or several joined by "|", matches those
// names exactly; anything else is a regular expression, which must match
// the whole name (mcp__github__.* matches every tool of that server).
type matcher struct {
	all   bool
	names []string
	re    *regexp.Regexp
}

var plainNames = regexp.MustCompile(`^[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*$`)

func compileMatcher(s string) (matcher, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == "*" || s == ".*":
		return matcher{all: true}, nil
	case plainNames.MatchString(s):
		return matcher{names: strings.Split(s, "|")}, nil
	}
	re, err := regexp.Compile(`^(?:` + s + `)$`)
	if err != nil {
		return matcher{}, fmt.Errorf("matcher %q is not a valid regular expression: %w", s, err)
	}
	return matcher{re: re}, nil
}

// match reports whether the matcher selects name.
func (m matcher) match(name string) bool {
	switch {
	case m.all:
		return true
	case m.re != nil:
		return m.re.MatchString(name)
	}
	for _, n := range m.names {
		if n == name {
			return true
		}
	}
	return false
}

// Matches reports whether h's matcher selects subject (a tool's name in
// h's dialect, or SessionStart's source).
func (h Hook) Matches(subject string) bool {
	m, err := compileMatcher(h.Matcher)
	return err == nil && m.match(subject)
}
