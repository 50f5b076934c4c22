package replay

import (
	"fmt"
	"sort"
	"strings"

	"github.com/exocortex/exocortex/core/loop"
)

// Kinds of difference.
const (
	BlockAdded     = "block_added"
	BlockRemoved   = "block_removed"
	BlockChanged   = "block_changed"
	SystemPrompt   = "system_prompt"
	History        = "history"
	StateWritten   = "state_written"
	SignalFired    = "signal"
	ToolCall       = "tool_call"
	ExtensionError = "extension_error"
)

// Difference is one thing an iteration did otherwise than recorded.
// Recorded or Replayed is empty when the thing happened on one side only.
type Difference struct {
	Kind      string `json:"kind"`
	Hook      string `json:"hook,omitempty"`
	Extension string `json:"extension,omitempty"`
	Plugin    string `json:"plugin,omitempty"`
	// What names the thing: a block's title, a state key, a signal, a tool.
	What     string `json:"what,omitempty"`
	Recorded string `json:"recorded,omitempty"`
	Replayed string `json:"replayed,omitempty"`
}

// Compare lists what got did otherwise than rec, in a fixed order: blocks,
// system prompt, history, state writes, signals, tool calls, errors.
func Compare(rec, got *Iteration) []Difference {
	var out []Difference
	if rec.Request != nil || got.Request != nil {
		out = append(out, compareBlocks(blocksOf(rec.Request), blocksOf(got.Request))...)
		out = append(out, compareRequest(rec.Request, got.Request)...)
	}
	out = append(out, compareSets(StateWritten, writes(rec), writes(got))...)
	out = append(out, compareSets(SignalFired, signalsOf(rec), signalsOf(got))...)
	out = append(out, compareSets(ToolCall, toolCalls(rec), toolCalls(got))...)
	out = append(out, compareSets(ExtensionError, hookErrors(rec), hookErrors(got))...)
	return out
}

func blocksOf(r *loop.Request) []loop.RequestBlock {
	if r == nil {
		return nil
	}
	return r.Blocks
}

// compareBlocks matches blocks by hook, extension and title (the n-th of
// equal keys with the n-th).
func compareBlocks(rec, got []loop.RequestBlock) []Difference {
	key := func(b loop.RequestBlock) string { return b.Hook + "\x00" + b.Extension + "\x00" + b.Title }
	index := func(bs []loop.RequestBlock) (map[string][]loop.RequestBlock, []string) {
		m := map[string][]loop.RequestBlock{}
		var order []string
		for _, b := range bs {
			k := key(b)
			if _, ok := m[k]; !ok {
				order = append(order, k)
			}
			m[k] = append(m[k], b)
		}
		return m, order
	}
	rm, rorder := index(rec)
	gm, gorder := index(got)
	var out []Difference
	diff := func(kind string, b loop.RequestBlock, r, g string) {
		out = append(out, Difference{Kind: kind, Hook: b.Hook, Extension: b.Extension, Plugin: b.Plugin, What: b.Title, Recorded: r, Replayed: g})
	}
	for _, k := range rorder {
		rs, gs := rm[k], gm[k]
		for i, b := range rs {
			switch {
			case i >= len(gs):
				diff(BlockRemoved, b, b.Content, "")
			case gs[i].Content != b.Content:
				diff(BlockChanged, gs[i], b.Content, gs[i].Content)
			}
		}
		for _, b := range gs[min(len(rs), len(gs)):] {
			diff(BlockAdded, b, "", b.Content)
		}
	}
	for _, k := range gorder {
		if _, ok := rm[k]; ok {
			continue
		}
		for _, b := range gm[k] {
			diff(BlockAdded, b, "", b.Content)
		}
	}
	return out
}

// compareRequest compares the base system prompt and the history sent (the
// blocks are compared on their own, by extension).
func compareRequest(rec, got *loop.Request) []Difference {
	if rec == nil || got == nil {
		side := func(r *loop.Request) string {
			if r == nil {
				return "(no request)"
			}
			return fmt.Sprintf("%d messages", len(r.Messages))
		}
		return []Difference{{Kind: History, What: "request", Recorded: side(rec), Replayed: side(got)}}
	}
	var out []Difference
	if rec.System != got.System {
		out = append(out, Difference{Kind: SystemPrompt, What: firstDifference(rec.System, got.System), Recorded: rec.System, Replayed: got.System})
	}
	rh, gh := history(rec), history(got)
	for i := 0; i < max(len(rh), len(gh)); i++ {
		var r, g string
		if i < len(rh) {
			r = rh[i]
		}
		if i < len(gh) {
			g = gh[i]
		}
		if r != g {
			out = append(out, Difference{Kind: History, What: fmt.Sprintf("message %d of %d (recorded %d)", i+1, len(gh), len(rh)), Recorded: r, Replayed: g})
			break // the first difference says it; the rest follows from it
		}
	}
	return out
}

func history(r *loop.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Part == loop.PartHistory || m.Part == loop.PartSummary {
			out = append(out, m.Role+": "+m.Content)
		}
	}
	return out
}

// firstDifference names where two texts part: "line N".
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < min(len(al), len(bl)); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d", i+1)
		}
	}
	return fmt.Sprintf("line %d", min(len(al), len(bl))+1)
}

// compareSets reports the members of one side only, each once per extra
// occurrence (a multiset difference), in the order they happened.
func compareSets(kind string, rec, got []item) []Difference {
	count := func(xs []item) map[string]int {
		m := map[string]int{}
		for _, x := range xs {
			m[x.key()]++
		}
		return m
	}
	rc, gc := count(rec), count(got)
	var out []Difference
	for _, x := range rec {
		if gc[x.key()] > 0 {
			gc[x.key()]--
			continue
		}
		out = append(out, Difference{Kind: kind, Hook: x.hook, Extension: x.ext, Plugin: x.plugin, What: x.what, Recorded: orDash(x.detail)})
	}
	for _, x := range got {
		if rc[x.key()] > 0 {
			rc[x.key()]--
			continue
		}
		out = append(out, Difference{Kind: kind, Hook: x.hook, Extension: x.ext, Plugin: x.plugin, What: x.what, Replayed: orDash(x.detail)})
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type item struct{ hook, ext, plugin, what, detail string }

func (x item) key() string { return x.hook + "\x00" + x.ext + "\x00" + x.what + "\x00" + x.detail }

// writes are the state keys each extension wrote, once each: a stream
// extension is called once per piece of the reply, and the pieces are cut
// by time.
func writes(it *Iteration) []item {
	var out []item
	seen := map[string]bool{}
	for _, h := range it.Hooks {
		ws := append([]string(nil), h.Writes...)
		sort.Strings(ws)
		for _, w := range ws {
			x := item{hook: h.Hook, ext: h.Extension, plugin: h.Plugin, what: w, detail: "written"}
			if !seen[x.key()] {
				seen[x.key()] = true
				out = append(out, x)
			}
		}
	}
	return out
}

func signalsOf(it *Iteration) []item {
	var out []item
	for _, s := range it.Signals {
		out = append(out, item{what: s.Signal, detail: firstLine(s.Text)})
	}
	return out
}

func toolCalls(it *Iteration) []item {
	var out []item
	for _, c := range it.Calls {
		out = append(out, item{what: c.Tool, detail: "called with " + compactJSON(c.Args)})
	}
	for _, e := range it.Executed {
		out = append(out, item{what: e.Tool, detail: "ran with " + compactJSON(e.Args)})
	}
	return out
}

func hookErrors(it *Iteration) []item {
	var out []item
	seen := map[string]bool{}
	for _, h := range it.Hooks {
		x := item{hook: h.Hook, ext: h.Extension, plugin: h.Plugin, what: h.ErrorKind, detail: h.Error}
		if h.Error != "" && !seen[x.key()] {
			seen[x.key()] = true
			out = append(out, x)
		}
	}
	return out
}
