// Package workingmemory keeps the entities of the conversation in a small typed
// buffer, working_memory: the paths, URLs, identifiers and names (package
// textfacts) of every message added to the history. The memory relevance filter
// boosts memories that mention them, and the ontology query looks them up.
//
// Placement: hist_add_before, order 11, as in the seed. It fires for every
// message (the operator's, the model's replies, tool results), before it is
// stored.
//
// Rules:
//   - Messages the core injected (they carry a signal) are skipped: their words
//     are the core's, not the task's.
//   - Each entity found is counted once per message: a new entity enters with
//     mentions 1, a known one gets mentions+1 and last_seen = this message.
//   - The buffer holds Capacity entities. When it overflows, the entity seen
//     least recently goes first, and among equals the one mentioned least.
//   - Entities are kept in order of last_seen, most recent last.
package workingmemory

import (
	"context"
	"sort"

	"github.com/exocortex/exocortex/extensions/internal/entities"
	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Capacity is the number of entities the buffer keeps.
const Capacity = 40

// Key is the working_memory key.
func Key() sdk.Key[*exocortexv1.WorkingMemory] { return entities.Key() }

// Extension is the working-memory extension.
type Extension struct{}

// Spec declares it.
func (e Extension) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "working_memory",
		Hooks:           []sdk.Hook{sdk.HistAddBefore(e)},
		Order:           11,
		Reads:           []sdk.KeyRef{Key()},
		Writes:          []sdk.KeyRef{Key()},
		Description:     "Extracts the entities of each message (paths, URLs, identifiers, names) into the bounded working_memory buffer.",
		EffectsDeclared: true,
	}
}

// HistAddBefore adds the message's entities.
func (Extension) HistAddBefore(_ context.Context, c *sdk.Call, req *exocortexv1.HistAddBeforeRequest) (*exocortexv1.HistAddBeforeResponse, error) {
	m := req.GetMessage()
	if m.GetSignal() != "" {
		return nil, nil
	}
	ents := textfacts.Entities(m.GetContent())
	wm, _ := Key().Get(c)
	if wm == nil {
		wm = &exocortexv1.WorkingMemory{}
	}
	wm.MessagesSeen++
	if len(ents) == 0 {
		Key().Set(c, wm)
		return nil, nil
	}
	Add(wm, ents, m.GetRole())
	Key().Set(c, wm)
	return nil, nil
}

// Add folds one message's entities into wm (whose MessagesSeen is the message's
// number) and applies the capacity rule.
func Add(wm *exocortexv1.WorkingMemory, ents []textfacts.Entity, role string) {
	byText := map[string]*exocortexv1.WorkingEntity{}
	for _, e := range wm.Entities {
		byText[e.GetText()] = e
	}
	for _, e := range ents {
		if we, ok := byText[e.Text]; ok {
			we.Mentions++
			we.LastSeen = wm.MessagesSeen
			we.LastRole = role
			continue
		}
		we := &exocortexv1.WorkingEntity{Text: e.Text, Kind: e.Kind, Mentions: 1, FirstSeen: wm.MessagesSeen, LastSeen: wm.MessagesSeen, LastRole: role}
		byText[e.Text] = we
		wm.Entities = append(wm.Entities, we)
	}
	sort.SliceStable(wm.Entities, func(i, j int) bool {
		a, b := wm.Entities[i], wm.Entities[j]
		if a.GetLastSeen() != b.GetLastSeen() {
			return a.GetLastSeen() < b.GetLastSeen()
		}
		return a.GetMentions() < b.GetMentions()
	})
	if n := len(wm.Entities) - Capacity; n > 0 {
		wm.Entities = wm.Entities[n:]
	}
}

// Recent returns the texts of the n most recent entities, newest first
// (entities.Recent).
func Recent(wm *exocortexv1.WorkingMemory, n int) []string { return entities.Recent(wm, n) }
