package inspect

import (
	"strings"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/replay"
)

// RecallTitle is the title of the recall extension's block, the one whose
// memories [Recalled] lists (extensions/recall renders it).
const RecallTitle = "MEMORY RECALL"

// SawReply is the answer of GET /api/v1/saw/{session}: what the model saw in
// one turn.
type SawReply struct {
	Session string `json:"session"`
	// Turns lists every recorded turn of the session, to choose from.
	Turns []TurnRef `json:"turns"`
	Turn  TurnRef   `json:"turn"`
	// Iterations are the turn's model requests, in order.
	Iterations []SawIteration `json:"iterations"`
	// Recalled are the memories the turn's recall blocks brought, once each
	// (the first iteration that showed it), best first.
	Recalled []Recalled `json:"recalled"`
}

// SawIteration is one request as it went to the model, and the reply.
type SawIteration struct {
	N int `json:"n"`
	// System is the base system prompt (main prompt, tool list, secrets
	// line), before any block.
	System string `json:"system"`
	// Blocks are the prompt blocks that reached the request, each labelled
	// with the extension, plugin and hook that added it.
	Blocks []Block `json:"blocks"`
	// Messages are the request's messages as sent, each with its part.
	Messages []Message `json:"messages"`
	// Reply is what the model answered ("" when it was not called).
	Reply    string `json:"reply,omitempty"`
	Thinking string `json:"thinking,omitempty"`
	// Budget is how the request was sized (nil in recordings without it).
	Budget *Split `json:"budget,omitempty"`
	// Recalled are the memories of this request's recall blocks.
	Recalled []Recalled `json:"recalled"`
}

// Block is a prompt block and who added it.
type Block struct {
	Hook      string `json:"hook"`
	Extension string `json:"extension"`
	Plugin    string `json:"plugin,omitempty"`
	Title     string `json:"title,omitempty"`
	Content   string `json:"content"`
	// Recall marks the recall extension's block (title RecallTitle).
	Recall bool `json:"recall,omitempty"`
}

// Message is a message of a request: its role, the part of the prompt it
// belongs to (loop.PartSystem, PartSummary, PartBlocks, PartHistory) and
// its content.
type Message struct {
	Role    string `json:"role"`
	Part    string `json:"part"`
	Content string `json:"content"`
}

// Recalled is a memory a recall block showed the model, and why it was
// chosen, with the block's extension and hook.
type Recalled struct {
	Area string `json:"area"`
	Text string `json:"text"`
	Why  string `json:"why"`
	// Iteration is the first request that showed it.
	Iteration int    `json:"iteration"`
	Extension string `json:"extension"`
	Plugin    string `json:"plugin,omitempty"`
	Hook      string `json:"hook"`
}

// Saw builds what the model saw in turn t.
func Saw(session string, rec *replay.Recording, t *replay.Turn) SawReply {
	out := SawReply{Session: session, Turns: turnRefs(rec), Turn: turnRefs(&replay.Recording{Turns: []*replay.Turn{t}})[0],
		Iterations: []SawIteration{}, Recalled: []Recalled{}}
	seen := map[string]bool{}
	for _, it := range t.Iterations {
		si := SawIteration{N: it.N, Blocks: []Block{}, Messages: []Message{}, Recalled: []Recalled{}, Thinking: it.Thinking}
		if it.Reply != nil {
			si.Reply = *it.Reply
		}
		if r := it.Request; r != nil {
			si.System = r.System
			for _, b := range r.Blocks {
				blk := Block{Hook: b.Hook, Extension: b.Extension, Plugin: b.Plugin, Title: b.Title, Content: b.Content, Recall: b.Title == RecallTitle}
				si.Blocks = append(si.Blocks, blk)
				if !blk.Recall {
					continue
				}
				for _, m := range ParseRecall(b.Content) {
					m.Iteration, m.Extension, m.Plugin, m.Hook = it.N, b.Extension, b.Plugin, b.Hook
					si.Recalled = append(si.Recalled, m)
					if k := m.Area + "\x00" + m.Text; !seen[k] {
						seen[k] = true
						out.Recalled = append(out.Recalled, m)
					}
				}
			}
			for _, m := range r.Messages {
				si.Messages = append(si.Messages, Message{Role: m.Role, Part: m.Part, Content: m.Content})
			}
		}
		if it.Budget != nil {
			s := SplitOf(it.N, *it.Budget, requestBlocks(it.Request))
			si.Budget = &s
		}
		out.Iterations = append(out.Iterations, si)
	}
	return out
}

func requestBlocks(r *loop.Request) []loop.RequestBlock {
	if r == nil {
		return nil
	}
	return r.Blocks
}

// ParseRecall reads the memories of a recall block, as extensions/recall
// renders it: a heading line, then for each memory "- [AREA] TEXT" and
// "  why: WHY" (a memory's text may span lines). Text that is not in this
// shape yields no memory.
func ParseRecall(content string) []Recalled {
	var out []Recalled
	chunks := strings.Split(content, "\n- [")
	for _, c := range chunks[1:] {
		area, rest, ok := strings.Cut(c, "] ")
		if !ok {
			continue
		}
		i := strings.LastIndex(rest, "\n  why: ")
		if i < 0 {
			continue
		}
		out = append(out, Recalled{Area: area, Text: rest[:i], Why: strings.TrimSpace(rest[i+len("\n  why: "):])})
	}
	return out
}
