package loop

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/exocortex/exocortex/core/llm"
)

// Pinned prompt blocks. The blocks of message_loop_prompts_after (MEMORY
// RECALL, MEMORY CATALOG, TOOL SPECS) change from turn to turn. Sent as the
// prompt's last message and replaced on the next request, they would end the
// part of the request the server can reuse from its KV cache right after the
// history, every request. Instead, the message they make is pinned where it
// was sent: right after the history as it was then (after the operator's
// message, on a monologue's first iteration), and later requests repeat it
// there byte for byte, as part of the history, until compression moves the
// verbatim window past it. So the model still sees the recalled memories with
// the message they were recalled for, and the prefix of every request holds.
//
// A block is sent again only when it changed: a block whose extension returns
// the same content (as returned, before fitting) as the latest pinned copy
// still in the prompt is not repeated. A changed block goes in a new pinned
// message after the history as it is now, once per monologue: a block that
// changes again within the same monologue (a context warning, the situation
// after each step) is sent as the prompt's last message, as before pinning,
// and replaced on the next request, so stale copies do not pile up in the
// history. Pinned messages count against the
// history's share of the window and leave with the turns they follow (they
// are not archived: they were made from long-term memory and the tools).

// pinned is one message_loop_prompts_after message as it was sent.
type pinned struct {
	// At is the history's length when it was sent: it follows history[At-1].
	At int `json:"at"`
	// Text is the message's content as sent.
	Text string `json:"text"`
	// Blocks are the blocks it holds.
	Blocks []pinnedBlock `json:"blocks"`
	// Monologue is the request id of the monologue that sent it.
	Monologue string `json:"monologue,omitempty"`
}

// pinnedBlock identifies a block of a pinned message: its extension, its
// title and a digest of its content as the extension returned it.
type pinnedBlock struct {
	Source string `json:"source,omitempty"`
	Title  string `json:"title,omitempty"`
	Sum    string `json:"sum"`
}

func (p *pinned) message() llm.Message { return llm.Message{Role: llm.RoleUser, Content: p.Text} }

func blockKey(source, title string) string { return source + "\x00" + title }

func contentSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:12])
}

// visibleInserts are the pinned messages still in the prompt: those after a
// verbatim message.
func (a *Agent) visibleInserts() []*pinned {
	from := min(a.verbatimFrom, len(a.history))
	var out []*pinned
	for _, p := range a.inserts {
		if p.At > from && p.At <= len(a.history) {
			out = append(out, p)
		}
	}
	return out
}

// dropCompressedInserts forgets the pinned messages compression moved out of
// the prompt.
func (a *Agent) dropCompressedInserts() {
	a.inserts = a.visibleInserts()
}

// promptHistory is the verbatim history as the prompt shows it: each message
// (clipped when larger than half of budget), with the pinned messages at
// their places.
func (a *Agent) promptHistory(budget int) []llm.Message {
	from := min(a.verbatimFrom, len(a.history))
	ins := a.visibleInserts()
	var out []llm.Message
	k := 0
	for j := from; j < len(a.history); j++ {
		for ; k < len(ins) && ins[k].At <= j; k++ {
			out = append(out, ins[k].message())
		}
		out = append(out, a.promptMessage(a.history[j], budget))
	}
	for ; k < len(ins); k++ {
		out = append(out, ins[k].message())
	}
	return out
}

// insertTokensAfter counts the pinned messages that follow history[j].
func (a *Agent) insertTokensAfter(j int) int {
	n := 0
	for _, p := range a.inserts {
		if p.At == j+1 {
			n += a.tokens.message(p.message())
		}
	}
	return n
}

// unchangedBlocks empties the message_loop_prompts_after blocks (where 2)
// whose content is the same as their latest pinned copy in the prompt (the
// model sees that copy), and returns the digests of those to pin once fitted:
// the changed blocks not yet pinned in this monologue. The rest are sent last
// and not pinned.
func (a *Agent) unchangedBlocks(blocks []*promptBlock, monologue string) map[*promptBlock]string {
	latest := a.pinnedSums()
	thisMonologue := map[string]bool{}
	for _, p := range a.inserts {
		if p.Monologue == monologue {
			for _, b := range p.Blocks {
				thisMonologue[blockKey(b.Source, b.Title)] = true
			}
		}
	}
	sums := map[*promptBlock]string{}
	for _, b := range blocks {
		if b.where != 2 {
			continue
		}
		key := blockKey(b.GetSource(), b.GetTitle())
		sum := contentSum(b.GetContent())
		switch {
		case latest[key] == sum:
			b.Content = ""
		case !thisMonologue[key]:
			sums[b] = sum
		}
	}
	return sums
}

// pinnedSums returns the content sums of the blocks pinned in the visible
// history, by source and title: a block of the same sum is there already and
// is not sent again.
func (a *Agent) pinnedSums() map[string]string {
	latest := map[string]string{}
	for _, p := range a.visibleInserts() {
		for _, b := range p.Blocks {
			latest[blockKey(b.Source, b.Title)] = b.Sum
		}
	}
	return latest
}

// pin records the message made of the (fitted) message_loop_prompts_after
// blocks bs, sent as text after the current history in monologue.
func (a *Agent) pin(text string, bs []*promptBlock, sums map[*promptBlock]string, monologue string) {
	p := &pinned{At: len(a.history), Text: text, Monologue: monologue}
	for _, b := range bs {
		p.Blocks = append(p.Blocks, pinnedBlock{Source: b.GetSource(), Title: b.GetTitle(), Sum: sums[b]})
	}
	a.inserts = append(a.inserts, p)
}
