package main

import (
	"fmt"
	"io"

	"github.com/exocortex/exocortex/memory"
)

// defaultMinSimilarity is `memory search`'s relevance floor for hits the
// vector leg alone found: below it, a memory shares no word with the query
// and is not close to it in meaning either (with the built-in GloVe vectors,
// unrelated sentences score about -0.2 to 0.2 and related ones 0.5 and more).
const defaultMinSimilarity = 0.3

// weakHit reports whether h is only there because every store has a nearest
// neighbour: no BM25 match, and a similarity below floor. Hits found by words
// (BM25), or by neighbouring records, are never weak.
func weakHit(h memory.Hit, floor float64) bool {
	return h.BM25Rank == 0 && h.VectorRank > 0 && h.Similarity < floor
}

// printHits is `memory search`'s text output: the hits in their rank, less the
// weak ones, which are counted instead, and "no good match" when no hit is
// left. The ranking is the store's, unchanged: the floor is presentation only
// (--json and --queries, what scripts and the evaluation read, show every
// hit, as the agent's recall gets them).
func printHits(w io.Writer, res memory.Result, floor float64) {
	if len(res.Hits) == 0 {
		fmt.Fprintln(w, "no memories found")
		return
	}
	n, weak := 0, 0
	for _, h := range res.Hits {
		if weakHit(h, floor) {
			weak++
			continue
		}
		n++
		fmt.Fprintf(w, "%d. %s [%s", n, h.Record.ID, h.Record.Area)
		if h.Record.Key != "" {
			fmt.Fprintf(w, ", key %s", h.Record.Key)
		}
		fmt.Fprintf(w, "] %s\n   %s\n", h.Why(), oneLine(h.Record.Text, 160))
	}
	switch {
	case n == 0:
		fmt.Fprintf(w, "no good match: the %d nearest memories share no words with the query and are not close in meaning (similarity below %.2f; --min-similarity -1 shows them)\n", weak, floor)
	case weak > 0:
		fmt.Fprintf(w, "(%d weak matches left out: no shared words, similarity below %.2f; --min-similarity -1 shows them)\n", weak, floor)
	}
}
