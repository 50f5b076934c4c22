package lint

import (
	"fmt"
	"slices"

	"github.com/agnivade/levenshtein"

	"github.com/exocortex/exocortex/wiring"
)

// nearDistance is how far two key names may be apart to count as one name
// misspelt: one edit for short names, two from eight characters on.
func nearDistance(a, b string) bool {
	if a == b || len(a) < 4 || len(b) < 4 {
		return false
	}
	limit := 1
	if min(len(a), len(b)) >= 8 {
		limit = 2
	}
	return levenshtein.ComputeDistance(a, b) <= limit
}

// nearMisses reports key names that nearly match (rule 3: EXO035): a key that
// is read and never written, or written and never read, while another key's
// name is a small edit away (fail_tracker and fail_trackers). Each side then
// looks fine on its own (both are declared, both are used) and the reader
// simply never sees the writer's values. A pair where both sides are lonely
// (one only read, the other only written) is reported once, at the reader.
func (c *checker) nearMisses() {
	type lonely struct {
		k     *wiring.Key
		read  bool // read and never written (else written and never read)
		users []*wiring.Extension
	}
	var alone []lonely
	for _, k := range c.g.Keys {
		if k.Declared() && k.Decl().Owner == "core" {
			continue
		}
		writers := writersOf(k)
		switch {
		case len(k.Readers) > 0 && len(writers) == 0:
			alone = append(alone, lonely{k, true, k.Readers})
		case len(writers) > 0 && len(k.Readers) == 0:
			alone = append(alone, lonely{k, false, writers})
		}
	}
	// Readers first: a pair of a key only read and one only written is
	// reported at the reader, whose values never arrive.
	slices.SortStableFunc(alone, func(a, b lonely) int {
		switch {
		case a.read && !b.read:
			return -1
		case !a.read && b.read:
			return 1
		}
		return 0
	})
	reported := map[[2]string]bool{}
	for _, l := range alone {
		for _, other := range c.g.Keys {
			if !nearDistance(l.k.Name, other.Name) || reported[[2]string{other.Name, l.k.Name}] {
				continue
			}
			otherUsers := slices.Concat(other.Readers, writersOf(other))
			if len(otherUsers) == 0 {
				continue
			}
			reported[[2]string{l.k.Name, other.Name}] = true
			e := l.users[0]
			what, otherWhat := "read by %s and written by no extension", "written"
			if !l.read {
				what, otherWhat = "written by %s and read by no extension", "read"
			}
			if len(other.Readers) > 0 && len(writersOf(other)) > 0 {
				otherWhat = "read and written"
			}
			c.add(Finding{Code: "EXO035", Severity: Error, Plugin: e.Plugin.Name, Extension: e.Name, Key: l.k.Name,
				Message: fmt.Sprintf("state key %q is "+what+", and key %q, one or two letters away, is %s by %s: probably one name misspelt, so the values never meet",
					l.k.Name, ats(l.users), other.Name, otherWhat, ats(slices.Compact(otherUsers))),
				Fix: fmt.Sprintf("use one name for the key: rename %q to %q (in state_keys and in reads/writes), or rename one so they differ clearly", l.k.Name, other.Name)})
		}
	}
}
