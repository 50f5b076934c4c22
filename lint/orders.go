package lint

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/exocortex/exocortex/wiring"
)

// numbered matches a name with a numeric prefix in the seed's style: "_15_x",
// "15_x", "015-x". The digits are the number the name promises.
var numbered = regexp.MustCompile(`^_?([0-9]+)[_-]`)

// prefix returns the digits of a numbered name and whether it has them.
func prefix(name string) (digits string, n int64, ok bool) {
	m := numbered.FindStringSubmatch(name)
	if m == nil {
		return "", 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 32)
	if err != nil {
		return "", 0, false
	}
	return m[1], n, true
}

// orders checks the order numbers (rule 4, seam 4: EXO041 to EXO043).
//
// EXO041: two extensions at one hook with one order run in an order nobody
// chose. EXO042: a numbered name whose number is not its order misleads every
// reader of the pipeline, and names the octal trap (Go reads the literal 010 as
// 8). EXO043: at one hook, numbered names that sort differently as strings than
// as integers ("_10_y" < "_9_x" as strings): Agent Zero ran extensions in string
// order, Exocortex runs them in integer order, so a port that kept the names ran
// in a different order than before; zero-padded prefixes make both agree.
func (c *checker) orders() {
	type slot struct {
		hook  string
		order int32
	}
	groups := map[slot][]*wiring.Extension{}
	var slots []slot
	for _, e := range c.g.Extensions {
		if e.ShadowedBy != "" {
			continue
		}
		s := slot{e.Hook.Name, e.Order()}
		if groups[s] == nil {
			slots = append(slots, s)
		}
		groups[s] = append(groups[s], e)
	}
	for _, s := range slots {
		exts := groups[s]
		if len(exts) < 2 {
			continue
		}
		runs := running(exts)
		sev, tail := Error, "they run in an order nobody chose (by name)"
		if len(runs) < 2 {
			sev, tail = Warning, "they collide as soon as the one that does not run is enabled"
		}
		for _, e := range exts[1:] {
			c.add(Finding{Code: "EXO041", Severity: sev, Plugin: e.Plugin.Name, Extension: e.Name,
				Message: fmt.Sprintf("extensions %s all run at %s with order %d: %s", names(exts), s.hook, s.order, tail),
				Fix:     "give each extension at the hook its own order"})
		}
	}

	for _, e := range c.g.Extensions {
		if e.ShadowedBy != "" {
			continue
		}
		digits, n, ok := prefix(e.Name)
		if !ok || n == int64(e.Order()) {
			continue
		}
		msg := fmt.Sprintf("extension %s at %s is named for position %s but has order %d", e.Name, e.Hook.Name, digits, e.Order())
		if len(digits) > 1 && digits[0] == '0' {
			if oct, err := strconv.ParseInt(digits, 8, 32); err == nil && oct == int64(e.Order()) {
				msg += fmt.Sprintf(" (%s read as an octal literal is %d: in Go, write %d)", digits, oct, n)
			}
		}
		c.add(Finding{Code: "EXO042", Severity: Warning, Plugin: e.Plugin.Name, Extension: e.Name,
			Message: msg,
			Fix:     fmt.Sprintf("set the order to %d or rename the extension without the number (the order, not the name, decides)", n)})
	}

	c.unordered()

	byHook := map[string][]*wiring.Extension{}
	var hookNames []string
	for _, e := range c.g.Extensions {
		if _, _, ok := prefix(e.Name); !ok || e.ShadowedBy != "" {
			continue
		}
		if byHook[e.Hook.Name] == nil {
			hookNames = append(hookNames, e.Hook.Name)
		}
		byHook[e.Hook.Name] = append(byHook[e.Hook.Name], e)
	}
	for _, h := range hookNames {
		exts := byHook[h] // in firing order
		for i, a := range exts {
			for _, b := range exts[i+1:] {
				if a.Order() == b.Order() || strings.Compare(a.Name, b.Name) <= 0 {
					continue
				}
				c.add(Finding{Code: "EXO043", Severity: Warning, Plugin: b.Plugin.Name, Extension: b.Name,
					Message: fmt.Sprintf("at %s, %s (order %d) runs before %s (order %d), but as strings %q sorts before %q: anything ported from a loader that sorts names as strings ran them the other way round",
						h, a.Name, a.Order(), b.Name, b.Order(), b.Name, a.Name),
					Fix: "zero-pad the numeric prefixes to one width (_09_x, _10_y) or drop them, and check which order the pair needs"})
			}
		}
	}
}

// unordered reports extensions whose order is 0 or below (EXO044). Orders are
// positive: 0 is what an SDK sends for an extension whose Spec sets none (Go's
// zero value, Python's default), so it most often means the author forgot, and
// the extension then runs before every ordered one at its hook, a place nobody
// chose; a negative order jumps ahead of the built-ins the same way.
func (c *checker) unordered() {
	for _, e := range c.g.Extensions {
		if e.ShadowedBy != "" || e.Order() > 0 {
			continue
		}
		what := "has order 0, the order of an extension whose declaration sets none"
		if e.Order() < 0 {
			what = fmt.Sprintf("has order %d, below every positive order", e.Order())
		}
		c.add(Finding{Code: "EXO044", Severity: Warning, Plugin: e.Plugin.Name, Extension: e.Name,
			Message: fmt.Sprintf("extension %s at %s %s, so it runs before every ordered extension at the hook", e.Name, e.Hook.Name, what),
			Fix:     "give it a positive order (Spec.Order in Go, order= in Python, \"order\" in a manifest) at the place in the hook it needs; exocortex lint lists the orders in use"})
	}
}

func names(es []*wiring.Extension) string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name+" (plugin "+e.Plugin.Name+")")
	}
	return strings.Join(out, ", ")
}
