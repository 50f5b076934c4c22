// Package belief is the belief-state tracker: it classifies what the operator's
// message is about into domains and keeps the result in bst_store, which a dozen
// extensions read (situational orientation, the HTN plan selector, the
// orchestration gate, the supervisor, the memory extensions, ...).
//
// Placement: message_loop_start, order 11. The seed ran it at before_main_llm_call,
// after the prompt was built, so the prompt-assembly readers of the same iteration
// saw the previous turn's classification. message_loop_start fires before every
// reader, so each of them sees this turn's.
//
// Rules (deterministic; a utility-model classifier could replace Classify behind
// the same key):
//
//   - The message is split into lower-case words. Each domain has cue words; a cue
//     ending in * matches any word it begins ("fail*" matches failing), a cue with a
//     space matches the phrase. A domain's score is its number of cue matches.
//   - Domains with a score are ranked by score, ties in the order of Domains.
//   - compound_sig is the top domain, joined with the second by "+" when the second
//     scores at least half the first ("debugging+coding"); primary_domain is the
//     first segment. No cue at all gives "general".
//   - confidence is the top score over all scores (0.2 for "general").
//   - compound_turns counts consecutive classified messages with the same
//     compound_sig; user_msg_count counts classified messages.
//   - Only a new operator message is classified (message_id differs from the
//     stored one); later iterations of the monologue keep the classification.
package belief

import (
	"context"
	"sort"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Domain is one class of request, with its cue words and the terms memory
// enhancement adds to recall queries for it.
type Domain struct {
	Name   string
	Cues   []string
	Expand []string
}

// General is the domain of a message without any cue.
const General = "general"

// Domains returns the domain table, in tie-break order.
func Domains() []Domain {
	return []Domain{
		{"debugging", []string{"error*", "fail*", "crash*", "bug*", "broken", "debug*", "exception*", "traceback", "panic*", "fix*", "stack trace", "not working", "doesn't work", "segfault"},
			[]string{"error", "fix", "cause", "workaround"}},
		{"coding", []string{"code", "coding", "implement*", "refactor*", "function*", "compil*", "build*", "test*", "program*", "script*", "class", "method*", "api", "repo*", "commit*", "golang", "python", "javascript", "typescript", "rust", "module*", "package*", "struct*"},
			[]string{"code", "function", "implementation", "test"}},
		{"investigation", []string{"investigat*", "why", "find out", "look into", "check*", "diagnos*", "determin*", "figure out", "what happened", "explor*", "inspect*", "root cause", "find"},
			[]string{"finding", "cause", "evidence"}},
		{"analysis", []string{"analy*", "compar*", "evaluat*", "measur*", "statistic*", "metric*", "trend*", "data", "dataset*", "csv", "chart*", "plot*", "benchmark*", "correlat*", "average", "median"},
			[]string{"data", "result", "metric", "comparison"}},
		{"research", []string{"research*", "paper*", "sources", "source", "literature", "cite", "citation*", "study", "studies", "article*", "search the web", "state of the art", "survey*"},
			[]string{"source", "paper", "reference"}},
		{"writing", []string{"draft*", "essay*", "email*", "letter*", "blog*", "summar*", "rewrite*", "rephrase*", "paragraph*", "proofread*", "tone", "wording", "outline*"},
			[]string{"draft", "summary", "style"}},
		{"planning", []string{"plan", "plans", "planning", "schedul*", "roadmap*", "milestone*", "priorit*", "organi*", "next steps", "timeline*", "deadline*", "steps"},
			[]string{"plan", "milestone", "priority"}},
		{"operations", []string{"deploy*", "server*", "docker*", "container*", "install*", "configur*", "config", "restart*", "disk*", "kubernetes", "k8s", "systemd", "nginx", "ssh", "permission*", "backup*", "upgrade*", "service*"},
			[]string{"config", "install", "service", "deploy"}},
		{"memory", []string{"remember*", "recall*", "last time", "earlier", "previous*", "forgot*", "forget*", "notes", "memor*", "what did"},
			[]string{"remember", "note", "decision"}},
		{"conversation", []string{"hi", "hello", "hey", "thanks", "thank", "how are you", "good morning"},
			nil},
	}
}

// Expansions returns the expansion terms of a domain ("" or unknown: none).
func Expansions(domain string) []string {
	for _, d := range Domains() {
		if d.Name == domain {
			return append([]string(nil), d.Expand...)
		}
	}
	return nil
}

// Score is one domain's score for a text.
type Score struct {
	Domain string
	Score  int
}

// Scores returns the domains that score for text, best first.
func Scores(text string) []Score {
	words := textfacts.Words(text)
	joined := " " + strings.Join(words, " ") + " "
	var out []Score
	for _, d := range Domains() {
		n := 0
		for _, cue := range d.Cues {
			switch {
			case strings.Contains(cue, " "):
				n += strings.Count(joined, " "+strings.Join(textfacts.Words(cue), " ")+" ")
			case strings.HasSuffix(cue, "*"):
				p := strings.TrimSuffix(cue, "*")
				for _, w := range words {
					if strings.HasPrefix(w, p) {
						n++
					}
				}
			default:
				for _, w := range words {
					if w == cue {
						n++
					}
				}
			}
		}
		if n > 0 {
			out = append(out, Score{d.Name, n})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// Classify fills a BeliefState's classification fields for text (not the
// momentum and count, which depend on the previous state).
func Classify(text string) *exocortexv1.BeliefState {
	sc := Scores(text)
	if len(sc) == 0 {
		return &exocortexv1.BeliefState{CompoundSig: General, PrimaryDomain: General, Domains: []string{General}, Confidence: 0.2}
	}
	total := 0
	for _, s := range sc {
		total += s.Score
	}
	sig := sc[0].Domain
	if len(sc) > 1 && 2*sc[1].Score >= sc[0].Score {
		sig += "+" + sc[1].Domain
	}
	bs := &exocortexv1.BeliefState{CompoundSig: sig, PrimaryDomain: sc[0].Domain, Confidence: float64(sc[0].Score) / float64(total),
		Expansions: Expansions(sc[0].Domain)}
	for _, s := range sc {
		bs.Domains = append(bs.Domains, s.Domain)
	}
	return bs
}

func key() sdk.Key[*exocortexv1.BeliefState] { return sdk.KeyOf[*exocortexv1.BeliefState]() }

// Tracker is the belief-state tracker extension.
type Tracker struct{}

// Spec declares the tracker.
func (e Tracker) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "belief_state_tracker",
		Hooks:           []sdk.Hook{sdk.MessageLoopStart(e)},
		Order:           11,
		Reads:           []sdk.KeyRef{key()},
		Writes:          []sdk.KeyRef{key()},
		Description:     "Classifies the operator's message into domains (compound signature, momentum) in bst_store, before any reader of the iteration.",
		EffectsDeclared: true,
	}
}

// MessageLoopStart classifies a new operator message.
func (Tracker) MessageLoopStart(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopStartRequest) (*exocortexv1.MessageLoopStartResponse, error) {
	m := turn.UserMessage(c)
	if m == nil {
		return nil, nil
	}
	prev, _ := key().Get(c)
	if prev.GetMessageId() == m.GetId() && m.GetId() != "" {
		return nil, nil
	}
	bs := Classify(m.GetContent())
	bs.MessageId = m.GetId()
	bs.UserMsgCount = prev.GetUserMsgCount() + 1
	bs.CompoundTurns = 1
	if prev.GetCompoundSig() == bs.GetCompoundSig() {
		bs.CompoundTurns = prev.GetCompoundTurns() + 1
	}
	key().Set(c, bs)
	return nil, nil
}
