// Package profile keeps the operator profile: what the operator has said about
// themselves and how they like to work, across sessions (operator_profile is a
// persistent key), and shows it to the model.
//
// Operator profile (message_loop_prompts_before, order 13). The seed ran it at
// before_main_llm_call, where its block never reached the model; it now adds
// its block while the prompt is assembled. For each operator message of the
// context's recent messages not yet folded in (after last_message_id; when that
// is not among them, the latest operator message only):
//   - name: "my name is X", "call me X", "I'm X" with X capitalised;
//   - role: "I'm a/an ROLE" / "I am a/an ROLE" (up to the end of the clause);
//   - preferences: sentences saying how to work: with "I prefer", "I'd rather",
//     "I like", "please always", "always", "never", "don't ever", "instead of";
//     a new one replaces a similar older one (word overlap of 0.6 or more); the
//     newest MaxPreferences are kept;
//   - the message counts for the primary domain of bst_store.
//
// The recent messages suffice: the extension runs at every iteration, and an
// operator message is one of the last few when the first iteration after it
// runs, so it never needs the whole history (and does not declare ReadsHistory).
//
// The PROFILE block names what is known, lists the preferences as instructions,
// and from the third message on the three most frequent domains. Nothing is
// added while nothing is known.
package profile

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// MaxPreferences bounds the preferences kept.
const MaxPreferences = 12

func key() sdk.Key[*exocortexv1.OperatorProfile] { return sdk.KeyOf[*exocortexv1.OperatorProfile]() }
func bstKey() sdk.Key[*exocortexv1.BeliefState]  { return sdk.KeyOf[*exocortexv1.BeliefState]() }

var (
	nameRE = regexp.MustCompile(`(?:[Mm]y name is|[Cc]all me|\bI'm|\bI am)\s+([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)\b`)
	roleRE = regexp.MustCompile(`(?i)\bI(?:'m| am) (?:a|an) ([a-z][a-z -]{2,40}?)(?:[.,;!?]|$| and | who | at | working)`)
	prefRE = regexp.MustCompile(`(?i)\b(i prefer|i'd rather|i like|please always|always|never|don't ever|instead of)\b`)
)

// notNames are words "I'm X" matches that are not names.
var notNames = map[string]bool{"Sorry": true, "Not": true, "Done": true, "Back": true, "Here": true, "Happy": true, "Sure": true, "Fine": true, "Going": true, "Trying": true, "Working": true, "Looking": true}

// Fold updates p with one operator message classified as domain.
func Fold(p *exocortexv1.OperatorProfile, text, domain string) {
	p.Messages++
	p.Words += int64(len(strings.Fields(text)))
	if m := nameRE.FindStringSubmatch(text); m != nil && !notNames[strings.Fields(m[1])[0]] {
		p.Name = m[1]
	}
	if m := roleRE.FindStringSubmatch(text); m != nil {
		p.Role = strings.TrimSpace(m[1])
	}
	for _, s := range textfacts.Sentences(text) {
		if !prefRE.MatchString(s) || strings.HasSuffix(s, "?") {
			continue
		}
		s = textfacts.Shorten(s, 160)
		kept := p.Preferences[:0]
		for _, old := range p.Preferences {
			if textfacts.Jaccard(old, s) < 0.6 {
				kept = append(kept, old)
			}
		}
		p.Preferences = append(kept, s)
	}
	if n := len(p.Preferences) - MaxPreferences; n > 0 {
		p.Preferences = p.Preferences[n:]
	}
	if domain != "" {
		if p.DomainCounts == nil {
			p.DomainCounts = map[string]int32{}
		}
		p.DomainCounts[domain]++
	}
}

// Render is the PROFILE block's text, "" when nothing is known.
func Render(p *exocortexv1.OperatorProfile) string {
	var b strings.Builder
	if p.GetName() != "" {
		fmt.Fprintf(&b, "The operator's name is %s.", p.GetName())
	}
	if p.GetRole() != "" {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "They are %s %s.", article(p.GetRole()), p.GetRole())
	}
	if len(p.GetPreferences()) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("They asked for this; follow it unless told otherwise now:")
		for _, s := range p.GetPreferences() {
			b.WriteString("\n- " + s)
		}
	}
	if p.GetMessages() >= 3 && len(p.GetDomainCounts()) > 0 {
		type dc struct {
			d string
			n int32
		}
		var ds []dc
		for d, n := range p.GetDomainCounts() {
			if d != "general" && d != "conversation" {
				ds = append(ds, dc{d, n})
			}
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i].n > ds[j].n || ds[i].n == ds[j].n && ds[i].d < ds[j].d })
		if len(ds) > 3 {
			ds = ds[:3]
		}
		if len(ds) > 0 {
			var parts []string
			for _, x := range ds {
				parts = append(parts, fmt.Sprintf("%s (%d)", x.d, x.n))
			}
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString("They usually ask about: " + strings.Join(parts, ", ") + ".")
		}
	}
	return b.String()
}

func article(s string) string {
	if strings.ContainsRune("aeiou", rune(strings.ToLower(s)[0])) {
		return "an"
	}
	return "a"
}

// Extension is the operator-profile extension.
type Extension struct{}

// Spec declares it.
func (e Extension) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "operator_profile",
		Hooks:           []sdk.Hook{sdk.MessageLoopPromptsBefore(e)},
		Order:           13,
		Reads:           []sdk.KeyRef{key(), bstKey()},
		Writes:          []sdk.KeyRef{key()},
		InjectsPrompt:   true,
		Description:     "Folds the operator's messages into operator_profile (name, role, stated preferences, domains) and adds the PROFILE block.",
		EffectsDeclared: true,
	}
}

// MessageLoopPromptsBefore updates and shows the profile.
func (Extension) MessageLoopPromptsBefore(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	p, _ := key().Get(c)
	if p == nil {
		p = &exocortexv1.OperatorProfile{}
	}
	var ops []*exocortexv1.Message
	for _, m := range c.Context().GetInteractionHistory().GetRecentMessages() {
		if turn.IsOperator(m) {
			ops = append(ops, m)
		}
	}
	start := -1
	for i, m := range ops {
		if m.GetId() == p.GetLastMessageId() {
			start = i + 1
		}
	}
	if start < 0 && len(ops) > 0 {
		start = len(ops) - 1
	}
	if start >= 0 && start < len(ops) {
		bs, _ := bstKey().Get(c)
		for _, m := range ops[start:] {
			domain := ""
			if m.GetId() == bs.GetMessageId() {
				domain = bs.GetPrimaryDomain()
			}
			Fold(p, m.GetContent(), domain)
			p.LastMessageId = m.GetId()
		}
		key().Set(c, p)
	}
	text := Render(p)
	if text == "" {
		return nil, nil
	}
	return &exocortexv1.MessageLoopPromptsBeforeResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "OPERATOR PROFILE", Content: text}}}, nil
}
