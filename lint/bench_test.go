package lint

import (
	"fmt"
	"testing"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/state"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/wiring"
)

// benchInput builds n plugins of ten extensions, four keys, two tools and two
// data files each, wired to one another's keys and to the built-in ones, with a
// WIRING.md to compare against: a larger installation than any real one.
func benchInput(tb testing.TB, n int) Input {
	tb.Helper()
	all := hooks.All()
	builtin := state.Builtin()
	var prompts []Prompt
	var plugins []wiring.Plugin
	for p := range n {
		name := fmt.Sprintf("plugin%02d", p)
		m := &exocortexv1.ManifestResponse{Plugin: name, Version: "1.0.0"}
		for k := range 4 {
			m.StateKeys = append(m.StateKeys, &exocortexv1.StateKeySpec{
				Name: fmt.Sprintf("%s_key%d", name, k), Type: "exocortex.v1.SupervisorState",
				Scope: exocortexv1.Scope(1 + k%4), Owner: name})
		}
		for e := range 10 {
			h := all[(p+e)%len(all)]
			spec := &exocortexv1.ExtensionSpec{
				Name: fmt.Sprintf("%s_ext%d", name, e), Hook: h.Hook, Order: int32(p*10 + e),
				Reads:         []string{fmt.Sprintf("plugin%02d_key%d", (p+1)%n, e%4), builtin[e%len(builtin)].Name},
				Writes:        []string{fmt.Sprintf("%s_key%d", name, e%4)},
				InjectsPrompt: h.InjectsPrompt,
			}
			m.Extensions = append(m.Extensions, spec)
		}
		for t := range 2 {
			tool := fmt.Sprintf("%s_tool%d", name, t)
			m.Tools = append(m.Tools, &exocortexv1.ToolSpec{Name: tool, Implemented: true, PromptFile: "agent.system.tool." + tool + ".md"})
			prompts = append(prompts, Prompt{File: "agent.system.tool." + tool + ".md", Source: "prompts/agent.system.tool." + tool + ".md", Builtin: true})
		}
		m.Files = []*exocortexv1.FileSpec{
			{Id: name + "_log", Path: "$EXOCORTEX_HOME/" + name + ".jsonl", Access: exocortexv1.Access_ACCESS_WRITE, User: name + "_ext0"},
			{Id: fmt.Sprintf("plugin%02d_log", (p+1)%n), Path: fmt.Sprintf("$EXOCORTEX_HOME/plugin%02d.jsonl", (p+1)%n), Access: exocortexv1.Access_ACCESS_READ, User: name + "_ext1"},
		}
		plugins = append(plugins, wiring.Plugin{Name: name, Path: "plugins/" + name, Dir: "plugins", Manifest: m})
	}
	in := Input{Model: wiring.Model{Plugins: plugins, BuiltinKeys: builtin, Prompts: prompts, Services: wiring.DefaultServices()}}
	in.WiringPath = "WIRING.md"
	in.Wiring = wiring.Render(&in.Model)
	return in
}

// BenchmarkCheck20Plugins is the whole lint of 20 plugins' manifests, WIRING.md
// comparison included (the target: 2 s).
func BenchmarkCheck20Plugins(b *testing.B) {
	in := benchInput(b, 20)
	b.ReportAllocs()
	for b.Loop() {
		if fs := Check(in); len(fs) == 0 {
			b.Fatal("the benchmark input should produce findings")
		}
	}
}

// BenchmarkRender20Plugins is WIRING.md alone for the same 20 plugins.
func BenchmarkRender20Plugins(b *testing.B) {
	in := benchInput(b, 20)
	b.ReportAllocs()
	for b.Loop() {
		wiring.Render(&in.Model)
	}
}
