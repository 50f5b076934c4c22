package loop

import (
	"fmt"
	"strings"
)

// NoticeRepeatedBlock is the Code of the notice that an extension returned the
// same prompt block (title and text) more than once for one request: the model
// reads it twice and the window pays for it twice. It is most often a port
// that appends to a list it also returned earlier, or an extension registered
// at two prompt hooks that returns the same text at both.
const NoticeRepeatedBlock = "repeated_block"

// reportRepeatedBlocks looks at the blocks gathered for one request and
// reports each extension whose blocks repeat: a notice event (run -p prints it
// on stderr, the terminal shows it) and a log line, once per extension for the
// agent's life, so a repeat at every iteration is told once. The blocks are
// sent as they are: what to keep is the extension's to decide.
func (a *Agent) reportRepeatedBlocks(t *turn, blocks []*promptBlock) {
	type same struct{ plugin, ext, title, content string }
	seen := map[same][]*promptBlock{}
	var order []same
	for _, b := range blocks {
		content := strings.TrimSpace(b.GetContent())
		if b.ext == nil || content == "" {
			continue
		}
		k := same{b.ext.Plugin.Name(), b.ext.Name(), b.GetTitle(), content}
		if seen[k] == nil {
			order = append(order, k)
		}
		seen[k] = append(seen[k], b)
	}
	for _, k := range order {
		bs := seen[k]
		if len(bs) < 2 {
			continue
		}
		who := k.plugin + "\x00" + k.ext
		a.mu.Lock()
		told := a.repeated[who]
		if a.repeated == nil {
			a.repeated = map[string]bool{}
		}
		a.repeated[who] = true
		a.mu.Unlock()
		if told {
			continue
		}
		var hooks []string
		for _, b := range bs {
			if h := b.ext.Hook.Name; len(hooks) == 0 || hooks[len(hooks)-1] != h {
				hooks = append(hooks, h)
			}
		}
		title := ""
		if k.title != "" {
			title = fmt.Sprintf(" %q", k.title)
		}
		msg := fmt.Sprintf("plugin %s, extension %s returned the same prompt block%s %d times for one request (at %s): the model reads it %d times and the context window pays for each; return it once (later requests: this is told once)",
			k.plugin, k.ext, title, len(bs), strings.Join(hooks, ", "), len(bs))
		a.log.Warn("repeated prompt block", "plugin", k.plugin, "extension", k.ext, "title", k.title, "times", len(bs), "hooks", strings.Join(hooks, ","))
		a.emit(Event{Type: EventNotice, Code: NoticeRepeatedBlock, Iteration: t.iteration, Plugin: k.plugin, Extension: k.ext,
			Hook: strings.Join(hooks, ","), Text: msg})
	}
}
