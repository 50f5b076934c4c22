package loop

import (
	"context"
	"strings"

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
// hold would keep a compression back. Only the operator's own compression
// could be held; the context budget's (trigger auto) cannot, since the
// prompt must fit the model's window: the reason is reported as a notice and
// the compression goes ahead. (There is no manual compression yet, so every
// compression is automatic.)

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
	for _, h := range holds {
		a.emit(Event{Type: EventNotice, Iteration: t.iteration, Code: NoticeCompressHold,
			Text: "an automatic history compression cannot be held back (the prompt must fit the model's window), so it goes ahead; held by " + h})
	}
	return keep, nil
}

// keptLines renders what the extensions asked the summary to keep.
func keptLines(keep []string) string {
	var b strings.Builder
	for _, k := range keep {
		b.WriteString("\n- kept: " + strings.Join(strings.Fields(k), " "))
	}
	return b.String()
}
