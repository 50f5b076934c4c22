package extensions_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// memoryPackages are the host's memory packages no extension imports: an
// extension reaches the home's memory through the host (sdk.Call.Memory, the
// MemoryService of proto/exocortex/v1/memory.proto), like any third-party
// plugin, and the staging logs through extensions/internal/stagelog.
var memoryPackages = []string{"memory", "memory/embed", "staging"}

// memoryViolations returns, for the packages under extensions/ outside
// extensions/internal/ (imports maps each, relative to the module, to its
// non-test imports, also relative), "PKG imports IMPORT" for each import of
// one of memoryPackages.
func memoryViolations(imports map[string][]string) []string {
	var out []string
	for p, imps := range imports {
		if !strings.HasPrefix(p, "extensions/") || strings.HasPrefix(p, "extensions/internal/") {
			continue
		}
		for _, imp := range imps {
			if slices.Contains(memoryPackages, imp) {
				out = append(out, p+" imports "+imp)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestNoExtensionImportsMemory checks, from the compiled import graph (go
// list), that no package under extensions/ outside extensions/internal/
// imports memory, memory/embed or staging. Tests may: they stand up a memory
// service to serve the extension.
func TestNoExtensionImportsMemory(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"extensions/...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		imports[strings.TrimPrefix(f[0], module)] = trimmed(f[1:])
	}
	if len(imports) < 10 {
		t.Fatalf("go list found %d packages under extensions/: %s", len(imports), out)
	}
	for _, v := range memoryViolations(imports) {
		t.Errorf("%s: an extension reaches memory through the host (sdk.Call.Memory) and the staging logs through extensions/internal/stagelog", v)
	}
}

// TestMemoryViolationsNamesTheImport plants violations and checks the rule
// names each, and only those.
func TestMemoryViolationsNamesTheImport(t *testing.T) {
	tests := []struct {
		name    string
		imports map[string][]string
		want    []string
	}{
		{"clean", map[string][]string{"extensions/recall": {"sdk", "extensions/internal/turn"}}, nil},
		{"memory", map[string][]string{"extensions/recall": {"sdk", "memory"}}, []string{"extensions/recall imports memory"}},
		{"embed", map[string][]string{"extensions/memorytools": {"memory/embed"}}, []string{"extensions/memorytools imports memory/embed"}},
		{"staging", map[string][]string{"extensions/stagingnote": {"staging", "config"}}, []string{"extensions/stagingnote imports staging"}},
		{"internal may", map[string][]string{"extensions/internal/stagelog": {"staging"}}, nil},
		{"outside extensions", map[string][]string{"cmd/exocortex": {"memory"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := memoryViolations(tt.imports); !slices.Equal(got, tt.want) {
				t.Errorf("memoryViolations = %q, want %q", got, tt.want)
			}
		})
	}
}
