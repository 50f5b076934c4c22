// Package evidence keeps the record of what tools actually returned and checks the
// final answer against it.
//
// Evidence ledger recorder (tool_execute_after, order 24; the seed's 25 is taken
// by examples/statepair's writer, which the end-to-end test loads beside the
// built-ins; 24 keeps it after the finalizer (22) and before the validators and
// the fallback logger, which read the ledger with the current call in it): every tool result
// except the response tool's becomes an Evidence entry of evidence_ledger: the
// tool, its arguments, the salient values of its output (textfacts.Values: numbers,
// paths, URLs, identifiers, quoted strings, key=value values; at most 40), a
// 300-character excerpt, whether it succeeded (toolresult.Failed), the iteration,
// and loop_period when loop_active was set (the seed's loop marker: the sleep
// consolidation treats such evidence with suspicion). The ledger keeps the last
// MaxEntries entries.
//
// Epistemic integrity (monologue_end, order 25): the final answer is split into
// sentences; each is checked with these rules and the unsupported ones are
// reported to the operator as a notice whose first line is a one-line summary
// (the terminal shows that line, the rest on demand):
//   - questions and hedged sentences (might, may, probably, I think, ...) claim
//     nothing;
//   - a sentence's salient tokens are what looks like a fact about the world
//     that a tool could have shown: numbers with a unit or counting something
//     ("12 ms", "3.5 GB", "40%", "17 open issues"), paths and URLs, and version
//     numbers ("v1.2", "2.0.10"). A bare number is not one (list numbering, "step
//     3", a digit inside a word), nor is an identifier, nor anything inside a
//     fenced code block; a sentence with tokens is a claim, supported when each
//     token occurs in the evidence (a number as a whole number, anything else as
//     text): the ledger's values, excerpts and arguments, and the operator's own
//     messages (repeating what the operator said needs no tool);
//   - a sentence without tokens that says it verified something ("I ran", "I
//     checked", "tests pass", "successfully", ...) is a claim of verification,
//     supported when some tool call succeeded; "tests pass" is contradicted when
//     code_quality's last verdict is tests_failed or errors;
//   - a token found only in loop-period evidence is reported as weakly supported;
//   - nothing is checked when the monologue was stopped (its answer is the core's
//     message) or when the conversation is small talk (primary domain
//     conversation) and no tool ran.
package evidence

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	"github.com/exocortex/exocortex/extensions/internal/toolresult"
	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// MaxEntries is how many entries the ledger keeps.
const MaxEntries = 100

// LedgerKey is the evidence_ledger key.
func LedgerKey() sdk.Key[*exocortexv1.EvidenceLedger] {
	return sdk.KeyOf[*exocortexv1.EvidenceLedger]()
}
func loopKey() sdk.Key[*exocortexv1.LoopActive]     { return sdk.KeyOf[*exocortexv1.LoopActive]() }
func bstKey() sdk.Key[*exocortexv1.BeliefState]     { return sdk.KeyOf[*exocortexv1.BeliefState]() }
func qualityKey() sdk.Key[*exocortexv1.CodeQuality] { return sdk.KeyOf[*exocortexv1.CodeQuality]() }

// Recorder is the evidence-ledger recorder.
type Recorder struct{}

// Spec declares it.
func (e Recorder) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "evidence_ledger_recorder",
		Hooks:           []sdk.Hook{sdk.ToolExecuteAfter(e)},
		Order:           24,
		Reads:           []sdk.KeyRef{LedgerKey(), loopKey()},
		Writes:          []sdk.KeyRef{LedgerKey()},
		Description:     "Appends each tool output (salient values, excerpt, success, loop marker) to evidence_ledger.",
		EffectsDeclared: true,
	}
}

// ToolExecuteAfter records the result.
func (Recorder) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	r := req.GetResult()
	if r.GetBreakLoop() {
		return nil, nil
	}
	l, _ := LedgerKey().Get(c)
	if l == nil {
		l = &exocortexv1.EvidenceLedger{}
	}
	la, _ := loopKey().Get(c)
	out := r.GetContent()
	if r.GetError() != "" {
		out += "\n" + r.GetError()
	}
	args := req.GetToolCall().GetArgsJson()
	if len(args) > 500 {
		args = args[:500]
	}
	l.Entries = append(l.Entries, &exocortexv1.Evidence{
		ToolName:   req.GetToolCall().GetName(),
		ArgsJson:   args,
		Values:     textfacts.Values(out, 40),
		Excerpt:    textfacts.Shorten(out, 300),
		Ok:         !toolresult.Failed(r),
		LoopPeriod: la.GetActive(),
		Iteration:  c.Context().GetIteration(),
	})
	if n := len(l.Entries) - MaxEntries; n > 0 {
		l.Entries = l.Entries[n:]
	}
	LedgerKey().Set(c, l)
	return nil, nil
}

// Integrity is the epistemic-integrity check.
type Integrity struct{}

// Spec declares it.
func (e Integrity) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "epistemic_integrity",
		Hooks:       []sdk.Hook{sdk.MonologueEnd(e)},
		Order:       25,
		Reads:       []sdk.KeyRef{LedgerKey(), bstKey(), qualityKey()},
		Description: "Checks the claims of the final answer against the evidence ledger and reports those without evidence to the operator.",
		// Every operator message of the session counts as a source of a claim.
		ReadsHistory:    true,
		EffectsDeclared: true,
	}
}

var (
	hedgeRE    = regexp.MustCompile(`(?i)\b(might|may|maybe|perhaps|probably|possibly|likely|i think|i believe|i guess|could be|seems?|appears?|not sure|unclear)\b`)
	verifyRE   = regexp.MustCompile(`(?i)\b(i (ran|checked|tested|verified|confirmed|ensured|measured|counted|looked)|verified|confirmed|successfully|tests? (pass|passed|passes|succeed)|all tests|it works|works now|is working)\b`)
	testsRE    = regexp.MustCompile(`(?i)\btests? (pass|passed|passes|succeed)|all tests`)
	listMarker = regexp.MustCompile(`^\s*(\d+[.)]|#+)\s+`)
	// unitRE is a number with a unit, or counting something (at most one
	// word between: "17 open issues").
	unitRE    = regexp.MustCompile(`(?i)(?:^|[^\w.\-])([-+]?\d+(?:[.,]\d+)*)(?:\s?(%|ms|µs|ns|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?|bytes?|[kmgtp]i?b|hz|khz|mhz|ghz|px|°c|°f|x)|\s+(?:[a-z]+\s+)?(lines?|files?|tests?|records?|items?|entries|entry|errors?|warnings?|tokens?|rows?|columns?|commits?|calls?|requests?|plugins?|functions?|methods?|packages?|modules?|results?|matches|hits?|times|words?|characters?|chars|issues?|tickets?|users?|processes|threads?|cores?|nodes?|messages?|sessions?|dependencies|directories|folders?|documents?|vectors?|bugs?|failures?|releases?|downloads?|stars?|servers?|containers?|machines?|instances?))(?:[^\w]|$)`)
	versionRE = regexp.MustCompile(`(?i)(?:^|[\s(])(v?\d+\.\d+\.\d+(?:[-+.][\w.]+)?|v\d+(?:\.\d+)?)\b`)
	fenceRE   = regexp.MustCompile("(?s)(?:^|\n)[ \t]*(?:```|~~~).*?(?:\n[ \t]*(?:```|~~~)|$)")
)

// Finding is one checked claim.
type Finding struct {
	Sentence string
	Missing  []string // tokens without evidence
	Weak     []string // tokens found only in loop-period evidence
	Problem  string   // for verification claims
}

// Check applies the rules to an answer.
func Check(answer string, ledger *exocortexv1.EvidenceLedger, operator []string, quality *exocortexv1.CodeQuality) (claims int, findings []Finding) {
	var strong, weak strings.Builder
	anyOK := false
	for _, e := range ledger.GetEntries() {
		b := &strong
		if e.GetLoopPeriod() {
			b = &weak
		}
		b.WriteString(strings.ToLower(strings.Join(e.GetValues(), "\n") + "\n" + e.GetExcerpt() + "\n" + e.GetArgsJson() + "\n"))
		if e.GetOk() && !e.GetLoopPeriod() {
			anyOK = true
		}
	}
	for _, o := range operator {
		strong.WriteString(strings.ToLower(o) + "\n")
	}
	strongText, weakText := strong.String(), weak.String()
	strongVals, weakVals := valueSet(strongText), valueSet(weakText)
	answer = fenceRE.ReplaceAllString(answer, "\n")
	for _, s := range textfacts.Sentences(answer) {
		if strings.HasSuffix(s, "?") || hedgeRE.MatchString(s) {
			continue
		}
		body := listMarker.ReplaceAllString(s, "")
		tokens := claimTokens(body)
		if len(tokens) == 0 {
			if !verifyRE.MatchString(body) {
				continue
			}
			claims++
			switch {
			case !anyOK:
				findings = append(findings, Finding{Sentence: s, Problem: "no tool call succeeded in this task"})
			case testsRE.MatchString(body) && (quality.GetVerdict() == "tests_failed" || quality.GetVerdict() == "errors"):
				findings = append(findings, Finding{Sentence: s, Problem: fmt.Sprintf("the last code run's verdict was %s", quality.GetVerdict())})
			}
			continue
		}
		claims++
		var f Finding
		for _, tok := range tokens {
			num := tok.num
			switch {
			case num && strongVals[tok.key], !num && strings.Contains(strongText, tok.key):
			case num && weakVals[tok.key], !num && strings.Contains(weakText, tok.key):
				f.Weak = append(f.Weak, tok.text)
			default:
				f.Missing = append(f.Missing, tok.text)
			}
		}
		if len(f.Missing) > 0 || len(f.Weak) > 0 {
			f.Sentence = s
			findings = append(findings, f)
		}
	}
	return claims, findings
}

func valueSet(text string) map[string]bool {
	m := map[string]bool{}
	for _, n := range textfacts.Numbers(text) {
		m[strings.ToLower(n)] = true
	}
	return m
}

// claimToken is a salient token of a sentence: text as shown, key as looked
// up in the evidence (a number's value, else the lower-cased text).
type claimToken struct {
	text, key string
	num       bool
}

// claimTokens are the world-fact-like tokens of a sentence: paths and URLs,
// versions, and numbers with a unit or counting something.
func claimTokens(s string) []claimToken {
	var out []claimToken
	seen := map[string]bool{}
	add := func(text, key string, num bool) {
		key = strings.ToLower(strings.TrimRight(key, ".,;:!?"))
		text = strings.TrimRight(text, ".,;:!?")
		if key != "" && !seen[key] {
			seen[key] = true
			out = append(out, claimToken{text: text, key: key, num: num})
		}
	}
	for _, e := range textfacts.Entities(s) {
		if e.Kind == textfacts.KindPath || e.Kind == textfacts.KindURL {
			add(e.Text, e.Text, false)
		}
	}
	for _, m := range versionRE.FindAllStringSubmatch(s, -1) {
		covered := false
		for _, t := range out {
			if strings.Contains(t.key, strings.ToLower(m[1])) {
				covered = true
			}
		}
		if !covered {
			add(m[1], m[1], false)
		}
	}
	for _, m := range unitRE.FindAllStringSubmatch(s, -1) {
		n := m[1]
		covered := false
		for _, t := range out {
			// A number inside a path or a version was checked with it.
			if strings.Contains(t.key, n) {
				covered = true
			}
		}
		if !covered {
			add(strings.TrimSpace(strings.TrimLeft(m[0], " \t([")), n, true)
		}
	}
	return out
}

// MonologueEnd checks the final answer.
func (Integrity) MonologueEnd(_ context.Context, c *sdk.Call, req *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	if req.GetStopReason() != "" || strings.TrimSpace(req.GetFinalResponse()) == "" {
		return nil, nil
	}
	ledger, _ := LedgerKey().Get(c)
	bs, _ := bstKey().Get(c)
	if bs.GetPrimaryDomain() == "conversation" && len(ledger.GetEntries()) == 0 {
		return nil, nil
	}
	q, _ := qualityKey().Get(c)
	var operator []string
	for _, m := range req.GetHistory() {
		if turn.IsOperator(m) {
			operator = append(operator, m.GetContent())
		}
	}
	claims, findings := Check(req.GetFinalResponse(), ledger, operator, q)
	if len(findings) == 0 {
		return nil, nil
	}
	var b strings.Builder
	// The first line is the summary the terminal shows; the rest is shown
	// on demand.
	var shown []string
	for _, f := range findings {
		shown = append(shown, f.Missing...)
		shown = append(shown, f.Weak...)
		if f.Problem != "" {
			shown = append(shown, "a claim of verification")
		}
	}
	if len(shown) > 4 {
		shown = append(shown[:4], "…")
	}
	fmt.Fprintf(&b, "epistemic_integrity: %d of %d claims in the answer have no tool output behind them (%s)", len(findings), claims, strings.Join(shown, ", "))
	for _, f := range findings {
		fmt.Fprintf(&b, "\n- %q", textfacts.Shorten(f.Sentence, 160))
		switch {
		case f.Problem != "":
			fmt.Fprintf(&b, " (%s)", f.Problem)
		default:
			if len(f.Missing) > 0 {
				fmt.Fprintf(&b, " (no tool output shows %s)", strings.Join(f.Missing, ", "))
			}
			if len(f.Weak) > 0 {
				fmt.Fprintf(&b, " (only output from a loop period shows %s)", strings.Join(f.Weak, ", "))
			}
		}
	}
	c.Logger().Info("unsupported claims", "count", len(findings), "claims", claims)
	return &exocortexv1.MonologueEndResponse{Notices: []string{b.String()}}, nil
}
