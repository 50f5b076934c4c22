package stagelog_test

import (
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/stagelog"
	"github.com/exocortex/exocortex/sleep"
)

// Sleep consolidation reads what the extensions write through this package. It
// keeps its own copies of the names (package sleep imports no extension), and
// this package is internal to extensions/, so the check that the two agree
// lives here: renaming one side fails here instead of silently in a run.
func TestNamesSharedWithSleep(t *testing.T) {
	for _, c := range []struct{ sleep, ext string }{
		{sleep.StagingArtifact, stagelog.KindArtifact},
		{sleep.StagingMemorize, stagelog.KindMemorize},
		{sleep.StagingInsight, stagelog.KindInsight},
		{sleep.KindRelationship, stagelog.KindRelationship},
		{"staging.jsonl", stagelog.StagingFile},
		{"ontology/relationships.jsonl", stagelog.RelationshipsFile},
	} {
		if c.sleep != c.ext {
			t.Errorf("sleep uses %q, the extensions %q", c.sleep, c.ext)
		}
	}
}
