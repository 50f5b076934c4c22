package loop

import (
	"fmt"
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TestPinnedBlocks: the message_loop_prompts_after blocks are sent once where
// they were made and repeated there byte for byte; a block is sent again only
// when its content changed or its earlier copy left with compression; a block
// that changes again within a monologue is sent last, not pinned.
func TestPinnedBlocks(t *testing.T) {
	a := &Agent{tokens: newTokenCounter()}
	msg := func(role, text string) *exocortexv1.Message {
		return &exocortexv1.Message{Id: fmt.Sprint(len(a.history)), Role: role, Content: text}
	}
	steps := []struct {
		name      string
		monologue string
		add       []*exocortexv1.Message
		// compressTo moves the verbatim window (0: unchanged).
		compressTo int
		blocks     map[string]string // title: content
		sent       []string          // titles sent and pinned this request
		once       []string          // titles sent last, not pinned
		prompt     string            // the history as the prompt shows it
	}{
		{"first iteration: recall after the question", "m1", []*exocortexv1.Message{msg("user", "q1")}, 0,
			map[string]string{"RECALL": "r1", "CATALOG": "c"}, []string{"CATALOG", "RECALL"}, nil, "q1|[CATALOG]c [RECALL]r1"},
		{"second iteration: unchanged, not repeated", "m1", []*exocortexv1.Message{msg("assistant", "a1"), msg("tool", "t1")}, 0,
			map[string]string{"RECALL": "r1", "CATALOG": "c"}, nil, nil, "q1|[CATALOG]c [RECALL]r1|a1|Result of tool :\nt1"},
		{"next turn: the changed block only", "m2", []*exocortexv1.Message{msg("user", "q2")}, 0,
			map[string]string{"RECALL": "r2", "CATALOG": "c"}, []string{"RECALL"}, nil, "q1|[CATALOG]c [RECALL]r1|a1|Result of tool :\nt1|q2|[RECALL]r2"},
		{"changed again in the same monologue: sent last only", "m2", []*exocortexv1.Message{msg("assistant", "a2")}, 0,
			map[string]string{"RECALL": "r2b", "CATALOG": "c"}, nil, []string{"RECALL"}, "q1|[CATALOG]c [RECALL]r1|a1|Result of tool :\nt1|q2|[RECALL]r2|a2"},
		{"the earlier content again: sent again, the latest copy differs", "m3", []*exocortexv1.Message{msg("user", "q3")}, 0,
			map[string]string{"RECALL": "r1"}, []string{"RECALL"}, nil, "q1|[CATALOG]c [RECALL]r1|a1|Result of tool :\nt1|q2|[RECALL]r2|a2|q3|[RECALL]r1"},
		{"compressed past the first copy: the catalog comes back", "m4", []*exocortexv1.Message{msg("user", "q4")}, 5,
			map[string]string{"RECALL": "r1", "CATALOG": "c"}, []string{"CATALOG"}, nil, "q3|[RECALL]r1|q4|[CATALOG]c"},
	}
	for _, st := range steps {
		a.history = append(a.history, st.add...)
		if st.compressTo > 0 {
			a.verbatimFrom = st.compressTo
			a.dropCompressedInserts()
		}
		var blocks []*promptBlock
		for _, title := range []string{"CATALOG", "RECALL"} {
			if c, ok := st.blocks[title]; ok {
				blocks = append(blocks, &promptBlock{PromptBlock: &exocortexv1.PromptBlock{Title: title, Source: "recall", Content: c}, where: 2, seq: len(blocks)})
			}
		}
		sums := a.unchangedBlocks(blocks, st.monologue)
		var sent, once []string
		var kept []*promptBlock
		var parts []string
		for _, b := range blocks {
			if _, pin := sums[b]; b.GetContent() != "" && !pin {
				once = append(once, b.GetTitle())
			} else if b.GetContent() != "" {
				sent = append(sent, b.GetTitle())
				kept = append(kept, b)
				parts = append(parts, "["+b.GetTitle()+"]"+b.GetContent())
			}
		}
		if fmt.Sprint(sent) != fmt.Sprint(st.sent) || fmt.Sprint(once) != fmt.Sprint(st.once) {
			t.Errorf("%s: pinned %v and sent last %v, want %v and %v", st.name, sent, once, st.sent, st.once)
		}
		if len(kept) > 0 {
			a.pin(strings.Join(parts, " "), kept, sums, st.monologue)
		}
		var got []string
		for _, m := range a.promptHistory(1 << 20) {
			got = append(got, m.Content)
		}
		if g := strings.Join(got, "|"); g != st.prompt {
			t.Errorf("%s: the history shows\n%s\nwant\n%s", st.name, g, st.prompt)
		}
	}
}
