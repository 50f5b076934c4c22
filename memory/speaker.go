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

// DefaultSpeakerLead is the weight the named-speaker prior rises to when the
// best candidate is itself spoken by someone the question names and the
// question does not ask "when" (SearchOptions.SpeakerLead): the ranking
// already agrees with the name, so the name is likely the one who did it.
// When it does not agree, the question more often names the one who did
// not (LoCoMo's adversarial questions: the best candidate is the named
// speaker's for 29% of them, against 71% of the multi-hop ones). Chosen on
// conv-26 and conv-30, checked on the other three (docs/perf/memory.md,
// "Seventh pass").
const DefaultSpeakerLead = 0.3

// DefaultQuestionPenalty is the share of the best candidate's score a record
// of a conversation that asks a question loses after the fusion
// (SearchOptions.QuestionPenalty): the neighbour context has already passed
// its words to its answer, which is more often the evidence (13% of the
// LoCoMo turns that ask are evidence, against 29% of the rest).
const DefaultQuestionPenalty = 0.15

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

// speakerLead is o.SpeakerLead with its default (0 for none: the prior
// stays speakerPrior), for the default search only, as speakerPrior.
func (o SearchOptions) speakerLead() float64 {
	switch {
	case o.Mode == ModeBM25 || o.Mode == ModeVector || o.SpeakerLead < 0:
		return 0
	case o.SpeakerLead == 0:
		return DefaultSpeakerLead
	}
	return o.SpeakerLead
}

// questionPenalty is o.QuestionPenalty with its default (0 for none), for the
// default search only, as speakerPrior.
func (o SearchOptions) questionPenalty() float64 {
	switch {
	case o.Mode == ModeBM25 || o.Mode == ModeVector || o.QuestionPenalty < 0:
		return 0
	case o.QuestionPenalty == 0:
		return DefaultQuestionPenalty
	}
	return o.QuestionPenalty
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

// turnRerank adjusts the scores of the speakerTop best hits of a
// conversation after the fusion: each spoken ("Name: text") by someone the
// query names gains wSpeaker times the best hit's score (none when the query
// names every speaker of those hits, or none of them; wLead instead, if
// larger, when the best hit is itself spoken by someone the query names and
// the query does not ask "when"), and each record of a
// conversation (one with a session) that asks a question (asksQuestion) loses
// wAsk times it, unless the query asks "when": a question about a time is
// often answered by the turn that asks, which names it ("How was the concert
// last Friday?"). It leaves hits in no particular order.
func (s *Store) turnRerank(query string, hits []fusedHit, wSpeaker, wLead, wAsk float64) {
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
	when := words["when"]
	if when {
		wAsk = 0 // the turn that asks "How was the concert last Friday?" carries the time
	}
	named := make([]bool, n)
	asks := make([]bool, n)
	seen := map[string]bool{}
	any, all := false, true
	s.mu.RLock()
	for i := range n {
		r := s.state.get(hits[i].id)
		if r == nil {
			all = false
			continue
		}
		asks[i] = wAsk > 0 && inConversation(r) && asksQuestion(r.Text)
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
	lift := wSpeaker > 0 && any && !all
	if lift && named[0] && !when {
		wSpeaker = max(wSpeaker, wLead) // the ranking agrees with the name
	}
	for i := range n {
		h := &hits[i]
		if lift && named[i] {
			h.named = wSpeaker * best
		}
		if asks[i] {
			h.asks = wAsk * best
		}
		h.score += h.named - h.asks
		h.raw += h.named - h.asks
	}
}
