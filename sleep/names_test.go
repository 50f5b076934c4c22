package sleep

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/exocortex/exocortex/extensions/memorize"
	"github.com/exocortex/exocortex/extensions/ontology"
	extsleep "github.com/exocortex/exocortex/extensions/sleep"
	"github.com/exocortex/exocortex/extensions/stagingnote"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The run reads what the extensions write: staging kinds and payloads, the
// loop-period tag, the trigger's request file, the ontology's keys and
// relationships. It keeps its own copies of those names (package sleep does not
// import extensions); this test holds them equal, so that renaming one side
// fails here instead of silently in a run. The names of the extensions' own
// library (extensions/internal/stagelog, which only extensions may import) are
// held equal to these by that package's TestNamesSharedWithSleep.
func TestNamesSharedWithTheExtensions(t *testing.T) {
	for _, c := range [][2]string{
		{StagingNote, stagingnote.KindNote}, {RequestFile, extsleep.RequestFile},
	} {
		if c[0] != c[1] {
			t.Errorf("sleep uses %q, the extensions %q", c[0], c[1])
		}
	}
	// The selective memorizer tags loop-period memories with TagLoopPeriod.
	ledger := &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{{ToolName: "code_execution", Ok: true}}}
	ins := memorize.Select("count the files in src", "There are 42 files in src, counted with find and wc.", "", "investigation", ledger, true)
	if len(ins) == 0 || !slices.Contains(ins[0].Tags, TagLoopPeriod) {
		t.Errorf("memorize.Select during a loop: %+v", ins)
	}
	// A memorize episode's loop flag reaches the ingest phase.
	b, _ := json.Marshal(memorize.Episode{User: "u", Response: "r", LoopPeriod: true})
	var p stagingPayload
	if err := json.Unmarshal(b, &p); err != nil || !p.LoopPeriod || p.User != "u" {
		t.Errorf("episode %s read as %+v", b, p)
	}
	// The trigger's request is read as written.
	b, _ = json.Marshal(extsleep.Request{RequestedUTC: "2026-11-21T12:00:00Z", Session: "s1", Reasons: []string{"x"}, ToolCalls: 100, LoopFired: true})
	var r Request
	if err := json.Unmarshal(b, &r); err != nil || !r.LoopFired || r.ToolCalls != 100 || r.Session != "s1" {
		t.Errorf("request %s read as %+v", b, r)
	}
	// Entity keys and relationships as package ontology writes them.
	for _, name := range []string{"Agent  Zero", "PostgreSQL", "kubernetes"} {
		if entityKey(name) != ontology.Key(name) {
			t.Errorf("key of %q: %q, ontology %q", name, entityKey(name), ontology.Key(name))
		}
	}
	b, _ = json.Marshal(ontology.Relationship{From: "A", Rel: "uses", To: "B", Session: "s", RequestID: "q", Evidence: "e"})
	var rl relationship
	if err := json.Unmarshal(b, &rl); err != nil || rl.From != "A" || rl.Rel != "uses" || rl.To != "B" || rl.Evidence != "e" {
		t.Errorf("relationship %s read as %+v", b, rl)
	}
}
