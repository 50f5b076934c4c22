package cmdhooks

import (
	"context"
	"sync"
	"time"

	"github.com/exocortex/exocortex/sdk"
)

// Hooks that match one occurrence of their event (a tool call, a prompt, a
// held call, a compression) run at once, as Claude Code and Codex run them:
// the host calls the hooks' extensions in their order, and the first of them
// to be called starts every matching hook of the event; each extension then
// waits for its own hook's result and answers with it. The host takes the
// answers in the extensions' order, so the results combine in order: a block
// wins (the first blocking hook's reason is the one the model reads; the
// hooks after it ran, but their answers are not taken), contexts are joined
// in order, and input changes are applied in order, each over the input the
// earlier ones left (every hook saw the input as it came, since they ran at
// once).

// groups are the runs started for each occurrence, by its key.
type groups struct {
	mu sync.Mutex
	m  map[string]*occurrenceRun
}

type occurrenceRun struct {
	started time.Time
	results map[int]*result // by Hook.Index
}

type result struct {
	done chan struct{}
	d    Decision
	err  error
}

// groupTTL is how long an occurrence's results are kept: an extension may be
// called again for it (a batch the host sends again), and when an earlier
// one blocks, the host calls no more of them. Keys name one occurrence (a
// tool call's id, a message's id), so a result is never taken for another.
const groupTTL = 10 * time.Minute

// selector gives the payload fields of a hook for an occurrence, and
// whether its matcher selects it.
type selector func(Hook) (map[string]any, bool)

// runGroup returns h's decision for the occurrence key: it starts every hook
// of h's event that sel selects, at once, when none is running yet.
func (b *Bridge) runGroup(ctx context.Context, c *sdk.Call, key string, h Hook, sel selector) (Decision, bool, error) {
	b.groups.mu.Lock()
	if b.groups.m == nil {
		b.groups.m = map[string]*occurrenceRun{}
	}
	g := b.groups.m[key]
	if g == nil {
		for k, old := range b.groups.m {
			if time.Since(old.started) > groupTTL {
				delete(b.groups.m, k)
			}
		}
		g = &occurrenceRun{started: time.Now(), results: map[int]*result{}}
		e := b.env(c)
		// Each hook runs within its own timeout, not the first caller's call.
		run := context.WithoutCancel(ctx)
		for _, o := range b.Hooks {
			if o.Event != h.Event {
				continue
			}
			fields, ok := sel(o)
			if !ok {
				continue
			}
			r := &result{done: make(chan struct{})}
			g.results[o.Index] = r
			go func(o Hook) {
				defer close(r.done)
				r.d, r.err = b.Test(run, o, e, fields)
			}(o)
		}
		b.groups.m[key] = g
	}
	r := g.results[h.Index]
	b.groups.mu.Unlock()
	if r == nil {
		return Decision{}, false, nil // its matcher does not select this occurrence
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return Decision{}, true, ctx.Err()
	}
	for _, w := range r.d.Warnings {
		warn(c, w)
	}
	return r.d, true, r.err
}
