package a0port

import (
	"slices"
	"strings"
	"testing"
)

// TestModulesSorted: LookupModule searches Modules by binary search, so one
// entry out of order hides it and the entries after it (helpers.history read
// as an Agent Zero internal with no stand-in).
func TestModulesSorted(t *testing.T) {
	mods := Modules()
	if !slices.IsSortedFunc(mods, func(a, b Module) int { return strings.Compare(a.Name, b.Name) }) {
		var names []string
		for _, m := range mods {
			names = append(names, m.Name)
		}
		t.Fatalf("Modules() is not sorted by name: %v", names)
	}
	for _, m := range mods {
		if _, ok := LookupModule(m.Name, nil); !ok {
			t.Errorf("LookupModule(%q) finds nothing", m.Name)
		}
	}
}
