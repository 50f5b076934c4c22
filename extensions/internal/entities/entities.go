// Package entities reads the working memory, the typed shared-state key
// working_memory (exocortex.v1.WorkingMemory) that the working_memory
// extension writes. It is a library, not an extension: recall and the ontology
// read the entities through the declared key with it, instead of importing the
// extension that keeps them (package workingmemory). Replacing that plugin
// changes what they see only through the key.
package entities

import (
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Key is the working_memory key; an extension lists it in its reads.
func Key() sdk.Key[*exocortexv1.WorkingMemory] { return sdk.KeyOf[*exocortexv1.WorkingMemory]() }

// Recent returns the texts of the n most recent entities, newest first.
func Recent(wm *exocortexv1.WorkingMemory, n int) []string {
	var out []string
	for i := len(wm.GetEntities()) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, wm.GetEntities()[i].GetText())
	}
	return out
}
