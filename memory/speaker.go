package memory

import (
	"strings"
	"unicode"
)

// DefaultSpeakerPrior is the weight of the named-speaker prior
// (SearchOptions.SpeakerPrior): a record spoken by someone the question names
// gets this share of the best candidate's score added to its own. Measured on
// the LoCoMo dev conversations (tuned on conv-26 and conv-30, checked on the
// other three; docs/perf/memory.md, "Sixth pass"): in categories 1-4 the
// evidence is spoken by the one speaker the question names 96% of the time.
const DefaultSpeakerPrior = 0.06

// speakerTop is how many of the best fused candidates the prior looks at.
const speakerTop = 50

// speakerPrior is o.SpeakerPrior with its default (0 for none). Only a
// default (hybrid) search gets it: each leg alone (ModeBM25, ModeVector)
// stays itself, so that it can be measured against the default.
func (o SearchOptions) speakerPrior() float64 {
	if o.Mode == ModeBM25 || o.Mode == ModeVector {
		return 0
	}
	switch {
	case o.SpeakerPrior < 0:
		return 0
	case o.SpeakerPrior == 0:
		return DefaultSpeakerPrior
	}
	return o.SpeakerPrior
}

// queryNames returns the set of lower-cased words of the query, for matching
// speakers' names against (namedIn).
func queryNames(query string) map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) {
		words[strings.ToLower(w)] = true
	}
	return words
}

// namedIn reports whether every word of the speaker's name is among the
// query's words (queryNames); an empty name is never named.
func namedIn(speaker string, words map[string]bool) bool {
	if speaker == "" {
		return false
	}
	for _, w := range strings.Fields(speaker) {
		if !words[strings.ToLower(w)] {
			return false
		}
	}
	return true
}

// speakerRerank adds to the score of each of the speakerTop best hits spoken
// ("Name: text") by someone the query names w times the best hit's score. It
// leaves hits in no particular order. A query that names no speaker of the
// candidates, or names every one of them, changes nothing.
func (s *Store) speakerRerank(query string, hits []fusedHit, w float64) {
	n := min(len(hits), speakerTop)
	if n == 0 {
		return
	}
	bestFirst(hits, n)
	best := hits[0].score
	if best <= 0 {
		return
	}
	words := queryNames(query)
	named := make([]bool, n)
	seen := map[string]bool{}
	any, all := false, true
	s.mu.RLock()
	for i := range n {
		r := s.state.get(hits[i].id)
		if r == nil {
			all = false
			continue
		}
		sp := speakerOf(r.Text)
		v, ok := seen[sp]
		if !ok {
			v = namedIn(sp, words)
			seen[sp] = v
		}
		named[i] = v
		any = any || v
		all = all && v
	}
	s.mu.RUnlock()
	if !any || all {
		return
	}
	for i := range n {
		if named[i] {
			h := &hits[i]
			h.named = w * best
			h.score += h.named
			h.raw += h.named
		}
	}
}
