package a0port

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/core/hooks"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/wiring"
)

// wiringName is the ported tree's wiring document, written beside PORT.md.
const wiringName = "WIRING.md"

// valueType is the type of every state key the layer declares for Agent Zero
// agent data (a0compat.key_for): any JSON value.
const valueType = "google.protobuf.Value"

// WiringHook is one hook of the ported tree's wiring, in firing order.
type WiringHook struct {
	Hook string `json:"hook"`
	// Position is the hook's place in the firing order of all hooks (1-based, as
	// WIRING.md numbers them).
	Position   int         `json:"position"`
	Extensions []WiringExt `json:"extensions"`
}

// WiringExt is one ported file as the host runs it.
type WiringExt struct {
	Order int32 `json:"order"`
	// Extension is the name the layer serves the file under (a0_<name>).
	Extension string `json:"extension"`
	Source    string `json:"source"` // relative to the Agent Zero tree
	// Reads and Writes are state keys (a0_<plugin>_<field>).
	Reads  []string `json:"reads,omitempty"`
	Writes []string `json:"writes,omitempty"`
	// Model says what of the file reaches the model: "prompt text" for a file
	// adding prompt text at a hook whose text the model sees, "never (seam 7)"
	// for one adding it too late, "" for a file that adds none.
	Model string `json:"model,omitempty"`
	// Runs is false for a file the layer cannot load (an import of Agent Zero
	// internals): it is ported, and left out when the plugin starts.
	Runs  bool     `json:"runs"`
	Notes []string `json:"notes,omitempty"`
}

// wireFile is one written file as the layer serves it.
type wireFile struct {
	f      *File
	name   string // the extension's name
	order  int32
	hook   hooks.Info
	loads  bool
	nokeys bool // served without its keys (a guard that does not load)
	notes  []string
	model  string
	inject bool
}

// wire lays out the written files as the layer (a0compat.load_tree) serves
// them: hooks and files in name order; a file sharing its prefix with an
// earlier one at the hook takes the next order no file there has; a name
// already served at another hook gets the hook's name as suffix.
func (r *Report) wire() []wireFile {
	var files []*File
	for i := range r.Files {
		if r.Files[i].Status != statusNotPorted && r.Files[i].Status != statusOverridden {
			files = append(files, &r.Files[i])
		}
	}
	slices.SortStableFunc(files, func(a, b *File) int {
		return cmp.Or(strings.Compare(a.Hook, b.Hook), strings.Compare(path.Base(a.Source), path.Base(b.Source)))
	})
	var out []wireFile
	names := map[string]bool{}
	for start := 0; start < len(files); {
		end := start
		for end < len(files) && files[end].Hook == files[start].Hook {
			end++
		}
		used, taken := map[int]bool{}, map[int]bool{}
		for _, f := range files[start:end] {
			used[f.Order] = true
		}
		for _, f := range files[start:end] {
			order := f.Order
			if taken[order] {
				for taken[order] || used[order] {
					order++
				}
			}
			taken[order] = true
			info, _ := hooks.Lookup(f.Hook)
			name := extName(path.Base(f.Source))
			if names[name] {
				name += "_" + f.Hook
			}
			for n := 2; names[name]; n++ {
				name = fmt.Sprintf("%s_%d", strings.TrimRight(name, "_0123456789"), n)
			}
			names[name] = true
			// A guard that does not load is still served, failing at every
			// call (noteBlockingGuards), under its name and order, with no keys.
			guard := f.noLoad && info.Gates
			wf := wireFile{f: f, name: name, order: int32(order), hook: info, loads: !f.noLoad || guard, inject: f.injects && !guard, nokeys: guard}
			if order != f.Order {
				wf.notes = append(wf.notes, fmt.Sprintf("prefix _%02d_ taken: served at order %d", f.Order, order))
			}
			for _, fd := range r.Findings {
				if fd.File == f.Source {
					wf.notes = append(wf.notes, fmt.Sprintf("seam %d: %s", fd.Seam, fd.What))
				}
			}
			if !wf.loads {
				wf.notes = append(wf.notes, "does not load: "+f.noLoadWhy)
			}
			switch {
			case f.injects && info.InjectsPrompt:
				wf.model = "prompt text"
			case f.injects:
				wf.model = "never (seam 7)"
			}
			out = append(out, wf)
		}
		start = end
	}
	return out
}

// manifest is the manifest the ported plugin answers, as the layer builds it
// from the written files (a0compat.Adapter.spec), with the state keys found
// statically, and two differences that make it the tree's diagram: injects_prompt
// says whether the file adds prompt text (the layer declares it for every file
// at a prompt hook, and for none elsewhere, so a too-late injection shows only
// here), and the description of each extension carries the seams its file hits.
func (r *Report) manifest(wf []wireFile) *exocortexv1.ManifestResponse {
	mf := &exocortexv1.ManifestResponse{Plugin: r.Plugin, Version: "ported"}
	owners := map[string]string{}
	var keys []string
	for _, w := range wf {
		reads := prefixed(r.Plugin, uniqSorted(append(slices.Clone(w.f.Reads), w.f.Writes...)))
		writes := prefixed(r.Plugin, w.f.Writes)
		if w.nokeys {
			reads, writes = nil, nil
		}
		desc := fmt.Sprintf("Agent Zero extension %s, ported.", path.Base(w.f.Source))
		if len(w.notes) > 0 {
			desc += " " + strings.Join(w.notes, "; ")
		}
		mf.Extensions = append(mf.Extensions, &exocortexv1.ExtensionSpec{
			Name: w.name, Hook: w.hook.Hook, Order: w.order, Reads: reads, Writes: writes,
			InjectsPrompt: w.inject, ReadsHistory: true, ReadsPrompt: true,
			Description: desc, Disabled: !w.loads,
		})
		for _, k := range reads {
			if _, ok := owners[k]; !ok {
				owners[k] = ""
				keys = append(keys, k)
			}
		}
		for _, k := range writes {
			if o := owners[k]; o == "" || w.name < o {
				owners[k] = w.name
			}
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		mf.StateKeys = append(mf.StateKeys, &exocortexv1.StateKeySpec{
			Name: k, Type: valueType, Scope: exocortexv1.Scope_SCOPE_SESSION, Owner: owners[k],
			Doc: "Agent Zero agent data, ported.",
		})
	}
	return mf
}

// buildWiring fills r.Wiring and r.WiringDoc: the ported tree's wiring in
// firing order, and its WIRING.md made by package wiring's generator, the one
// `exocortex lint --write` uses for the project's own plugins.
func (r *Report) buildWiring() {
	wf := r.wire()
	g := wiring.Build(&wiring.Model{
		Plugins:  []wiring.Plugin{{Name: r.Plugin, Manifest: r.manifest(wf)}},
		Services: wiring.DefaultServices(),
	})
	r.WiringDoc = string(g.RenderDoc(wiring.Doc{
		Header: "<!-- Code generated by `exocortex plugins port`; DO NOT EDIT. -->",
		Title:  "Wiring of the ported Agent Zero tree: " + r.Plugin,
		Intro: fmt.Sprintf("Made by `exocortex plugins port` from `%s` with the generator of the project's own\n"+
			"WIRING.md: the hooks the ported files are at, in firing order, each file's order and the\n"+
			"state keys it reads and writes (found statically; `exocortex lint` compares them with the\n"+
			"keys used at run time), and the seams each hits (notes). A file that adds prompt text\n"+
			"injects \"yes\" where the model sees it and \"too late\" where it never does (seam 7); in the\n"+
			"component graph its edge to the model's prompt is thick, or dotted and crossed. Port the\n"+
			"tree again to bring this file up to date.", r.Source),
		OmitEmptyHooks: true,
		ShowModel:      true,
	}))
	byName := map[string]wireFile{}
	for _, w := range wf {
		byName[w.name] = w
	}
	r.Wiring = nil
	for i, h := range hooks.All() {
		var exts []WiringExt
		for _, e := range g.Extensions {
			if e.Hook.Hook != h.Hook {
				continue
			}
			w := byName[e.Name]
			exts = append(exts, WiringExt{Order: e.Order(), Extension: e.Name, Source: w.f.Source,
				Reads: e.Spec.GetReads(), Writes: e.Spec.GetWrites(), Model: w.model, Runs: e.Runs(), Notes: w.notes})
		}
		if len(exts) > 0 {
			r.Wiring = append(r.Wiring, WiringHook{Hook: h.Name, Position: i + 1, Extensions: exts})
		}
	}
}

func uniqSorted(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// extName is the extension name a file is served as: a0_ and its name without
// the numeric prefix and .py, in letters, digits and underscores.
func extName(file string) string {
	n := strings.TrimSuffix(file, ".py")
	n = orderRE.ReplaceAllString(n, "")
	n = regexp.MustCompile(`\W+`).ReplaceAllString(n, "_")
	return "a0_" + n
}

// Manifest is the manifest the ported plugin answers, as the port wrote it
// (for the host's wiring check before the plugin is copied in).
func (r *Report) Manifest() *exocortexv1.ManifestResponse { return r.manifest(r.wire()) }
