package loop

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/exocortex/exocortex/core/llm"

	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// history_compress_before: before the oldest verbatim messages leave the
// prompt, the extensions are told which ones, why (the trigger) and against
// what budget; each may give text the summary keeps word for word (keep, in
// the extensions' order, after the part about the messages: the summary's
// cap drops its oldest lines first, so these stay longest), which is also
// given to the utility model as instructions when one writes the summary.
// Claude Code's PreCompact hooks run here (extensions/cmdhooks).
//
// hold keeps the operator's own compression (CompressNow, trigger manual:
// the terminal's /context compress) back, with the reason as its error. The
// context budget's (trigger auto) cannot be held, since the prompt must fit
// the model's window: the reason is reported as a notice and the
// compression goes ahead.

// The triggers of a compression, as history_compress_before's request names
// them (Claude Code's PreCompact trigger).
const (
	TriggerAuto   = "auto"
	TriggerManual = "manual"
)

// NoticeCompressHold is the notice's code when an extension asked to hold an
// automatic compression back, which cannot be done.
const NoticeCompressHold = "compress_hold_refused"

type compressRequest struct {
	trigger, instructions string
	leaving               []*exocortexv1.Message
	from, tokens, budget  int
}

// beforeCompress fires history_compress_before and returns what the summary
// keeps. Its error is a cancel or a required extension's failure.
func (a *Agent) beforeCompress(ctx context.Context, t *turn, r compressRequest) ([]string, error) {
	var keep []string
	var holds []string
	err := fire(ctx, a, t, exocortexv1.Hook_HOOK_HISTORY_COMPRESS_BEFORE,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.HistoryCompressBeforeRequest {
			return &exocortexv1.HistoryCompressBeforeRequest{Call: c, Trigger: r.trigger, CustomInstructions: r.instructions,
				Leaving: r.leaving, From: int32(r.from), To: int32(r.from + len(r.leaving)), Tokens: int32(r.tokens), Budget: int32(r.budget)}
		}, exocortexv1.PluginClient.HistoryCompressBefore,
		func(ext *host.Extension, resp *exocortexv1.HistoryCompressBeforeResponse) error {
			for _, k := range resp.GetKeep() {
				if k = strings.TrimSpace(k); k != "" {
					keep = append(keep, k)
				}
			}
			if resp.Hold != nil {
				holds = append(holds, ext.Name()+": "+resp.GetHold())
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	if len(holds) > 0 && r.trigger == TriggerManual {
		return nil, &HeldError{Reasons: holds}
	}
	for _, h := range holds {
		a.emit(Event{Type: EventNotice, Iteration: t.iteration, Code: NoticeCompressHold,
			Text: "an automatic history compression cannot be held back (the prompt must fit the model's window), so it goes ahead; held by " + h})
	}
	return keep, nil
}

// HeldError is a manual compression an extension held back.
type HeldError struct{ Reasons []string }

func (e *HeldError) Error() string {
	return "the history was not compressed: held back by " + strings.Join(e.Reasons, "; ")
}

// CompressNow compresses the history at the operator's request (trigger
// manual): every message but the newest leaves the verbatim window for
// long-term memory and the summary, whose utility model gets instructions.
// history_compress_before may hold it back (HeldError). It returns nil when
// there is nothing to compress. Call it only between turns.
func (a *Agent) CompressNow(ctx context.Context, instructions string) (*Compression, error) {
	if len(a.visibleHistory()) < 2 {
		return nil, nil
	}
	budget, err := a.historyBudget(ctx)
	if err != nil {
		return nil, err
	}
	t := &turn{requestID: uuid.NewString()}
	used := a.historyTokens(budget) + a.summaryTokens()
	return a.compress(ctx, t, budget, used, compressRequest{trigger: TriggerManual, instructions: instructions})
}

// historyBudget is the history's share of the window, as preparePrompt
// computes it.
func (a *Agent) historyBudget(ctx context.Context) (int, error) {
	window := a.resolveWindow(ctx)
	limit := window - reserveFor(window)
	system, _, err := a.baseSystemPrompt()
	if err != nil {
		return 0, err
	}
	sysTokens := a.tokens.message(llm.Message{Role: llm.RoleSystem, Content: system})
	if sysTokens > limit {
		return 0, fmt.Errorf("the fixed prompt takes about %d tokens, more than the %d the context window of %d leaves: raise num_ctx", sysTokens, limit, window)
	}
	return int(float64(limit-sysTokens) * historyShare), nil
}

// keptLines renders what the extensions asked the summary to keep.
func keptLines(keep []string) string {
	var b strings.Builder
	for _, k := range keep {
		b.WriteString("\n- kept: " + strings.Join(strings.Fields(k), " "))
	}
	return b.String()
}
