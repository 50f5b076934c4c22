package loop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/signals"
)

// Result is how a monologue ended.
type Result struct {
	// Response is the final answer (the response tool's text), or the core's
	// message when the monologue was stopped.
	Response string
	// StopReason is "" when a tool ended the monologue normally; otherwise why it
	// stopped: a signal value (unusable_limit, max_iterations) or
	// "extension:NAME: reason".
	StopReason string
	Iterations int
	// Notices are the monologue_end extensions' notes for the operator.
	Notices []string
}

// StopError reports a monologue the loop stopped instead of letting it run on.
type StopError struct {
	Reason  string
	Message string
}

func (e *StopError) Error() string {
	return "the monologue was stopped (" + e.Reason + "): " + e.Message
}

// Monologue runs the agent on one user message until a tool ends it or it is
// stopped. A stopped monologue returns its Result together with a *StopError.
func (a *Agent) Monologue(ctx context.Context, userText string) (_ *Result, retErr error) {
	if err := a.Init(ctx); err != nil {
		return nil, err
	}
	// A secret the operator typed is masked before anything stores or sends it.
	userText = a.masker().Mask(userText)
	t := &turn{requestID: uuid.NewString()}
	a.fam.enter(t.requestID, a)
	defer a.fam.leave(t.requestID)
	res := &Result{}
	a.store.ResetScope(exocortexv1.Scope_SCOPE_MONOLOGUE)
	a.emit(Event{Type: EventMonologueStart, Text: userText})

	// The finally part: monologue_end fires whatever happened, with a context that
	// outlives a Ctrl+C long enough to let extensions record the end.
	defer func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = fire(fctx, a, t, exocortexv1.Hook_HOOK_MONOLOGUE_END,
			func(c *exocortexv1.HookCall, f fields) *exocortexv1.MonologueEndRequest {
				return &exocortexv1.MonologueEndRequest{Call: c, FinalResponse: res.Response, History: ifFull(f.history, a.history), StopReason: res.StopReason}
			}, exocortexv1.PluginClient.MonologueEnd,
			func(_ *host.Extension, r *exocortexv1.MonologueEndResponse) error {
				res.Notices = append(res.Notices, r.GetNotices()...)
				return nil
			})
		for _, n := range res.Notices {
			a.emit(Event{Type: EventNotice, Text: n})
		}
		a.saveState(fctx)
		a.emit(Event{Type: EventMonologueEnd, Iteration: res.Iterations, Text: res.Response, StopReason: res.StopReason})
		// process_chain_end: the operator's chain is finished (Agent Zero fires it
		// once the monologue and its superiors' are done, and not after a failure;
		// a subordinate's monologue answers a tool call of its superior's).
		var stop *StopError
		if a.depth == 0 && (retErr == nil || errors.As(retErr, &stop)) {
			_ = fire(fctx, a, t, exocortexv1.Hook_HOOK_PROCESS_CHAIN_END,
				func(c *exocortexv1.HookCall, _ fields) *exocortexv1.ProcessChainEndRequest {
					return &exocortexv1.ProcessChainEndRequest{Call: c, FinalResponse: res.Response, StopReason: res.StopReason, Iterations: int32(res.Iterations)}
				}, exocortexv1.PluginClient.ProcessChainEnd, nil)
		}
	}()

	// The opening is a swap point like an iteration's start: a plugin rebuilt
	// while the session was idle serves the user message's hooks already.
	endOpening := a.opts.Host.BeginIteration(a.store)
	user := a.newMessage("user", "operator", userText)
	t.userMsg = user
	err := a.addMessage(ctx, t, user)
	if err == nil {
		err = fire(ctx, a, t, exocortexv1.Hook_HOOK_MONOLOGUE_START,
			func(c *exocortexv1.HookCall, _ fields) *exocortexv1.MonologueStartRequest {
				return &exocortexv1.MonologueStartRequest{Call: c, UserMessage: user}
			}, exocortexv1.PluginClient.MonologueStart, nil)
	}
	endOpening()
	if err != nil {
		return res, err
	}

	var lastReply string
	unusable := 0
	for t.iteration = 1; t.iteration <= a.opts.MaxIterations; t.iteration++ {
		res.Iterations = t.iteration
		done, err := a.iterate(ctx, t, res, &lastReply, &unusable)
		if err != nil || done {
			return res, err
		}
	}
	t.iteration = a.opts.MaxIterations
	res.StopReason = signals.MaxIterations
	msg, _ := a.injectSignal(ctx, t, signals.MaxIterations, nil)
	res.Response = msg
	return res, &StopError{Reason: signals.MaxIterations, Message: fmt.Sprintf("no response after %d iterations", a.opts.MaxIterations)}
}

// iterate runs one iteration; done is true when the monologue is over.
func (a *Agent) iterate(ctx context.Context, t *turn, res *Result, lastReply *string, unusable *int) (done bool, err error) {
	// Hot reload: plugin versions staged since the last iteration are swapped in
	// here, between iterations, and this iteration holds off further swaps.
	defer a.opts.Host.BeginIteration(a.store)()
	t.added = nil
	t.message = nil
	a.store.ResetScope(exocortexv1.Scope_SCOPE_ITERATION)
	a.emit(Event{Type: EventIteration, Iteration: t.iteration})

	var reply string
	var toolCall *exocortexv1.ToolCall
	var toolResult *exocortexv1.ToolResult
	// stage is where an error of this iteration comes from, for
	// message_loop_exception.
	stage := "loop"
	// message_loop_end fires even when the iteration failed (Agent Zero's finally).
	defer func() {
		ectx := ctx
		if ctx.Err() != nil {
			var cancel context.CancelFunc
			ectx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
		}
		var interventions []string
		var stop, stopper string
		var resumes resumeAsks
		final := err == nil && done && toolResult.GetBreakLoop()
		ferr := fire(ectx, a, t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_END,
			func(c *exocortexv1.HookCall, _ fields) *exocortexv1.MessageLoopEndRequest {
				return &exocortexv1.MessageLoopEndRequest{Call: c, Iteration: int32(t.iteration), Reply: reply, ToolCall: toolCall, ToolResult: toolResult, Added: t.added,
					Final: final, Resumed: int32(t.resumed)}
			}, exocortexv1.PluginClient.MessageLoopEnd,
			func(ext *host.Extension, r *exocortexv1.MessageLoopEndResponse) error {
				if r.Intervention != nil {
					interventions = append(interventions, r.GetIntervention())
				}
				if r.Stop != nil && stop == "" {
					stop, stopper = r.GetStop(), ext.Name()
				}
				if r.Resume != nil {
					resumes.add(ext.Name(), r.GetResume())
				}
				return nil
			})
		if err == nil && ferr != nil {
			err = ferr
		}
		if final && stop == "" && ctx.Err() == nil && ferr == nil && a.resume(t, res, resumes) {
			done = false
			interventions = append(interventions, resumes.messages...)
		}
		if err != nil || done || ctx.Err() != nil {
			return
		}
		if stop != "" {
			done = true
			res.StopReason = "extension:" + stopper + ": " + stop
			res.Response = stop
			err = &StopError{Reason: res.StopReason, Message: stop}
			return
		}
		// Every queued intervention is delivered, in extension order: dropping
		// all but one would be exactly the silent failure this loop exists to stop.
		for _, msg := range interventions {
			if _, ierr := a.injectSignal(ctx, t, signals.Intervention, map[string]any{"message": msg}); ierr != nil {
				err = ierr
				return
			}
		}
	}()

	// message_loop_exception fires first when the iteration failed (deferred
	// after message_loop_end's, so it runs before it).
	defer func() {
		if err != nil {
			err = a.exception(ctx, t, stage, err)
		}
	}()

	if err = fire(ctx, a, t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_START,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.MessageLoopStartRequest {
			return &exocortexv1.MessageLoopStartRequest{Call: c, Iteration: int32(t.iteration)}
		}, exocortexv1.PluginClient.MessageLoopStart, nil); err != nil {
		return false, err
	}
	prompt, err := a.preparePrompt(ctx, t)
	if err != nil {
		return false, err
	}
	prompt.messages = append([]llm.Message(nil), prompt.messages...)
	promptMsgs := make([]*exocortexv1.Message, len(prompt.messages))
	for i, m := range prompt.messages {
		promptMsgs[i] = &exocortexv1.Message{Role: m.Role, Content: m.Content}
	}
	if err = fire(ctx, a, t, exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL,
		func(c *exocortexv1.HookCall, f fields) *exocortexv1.BeforeMainLLMCallRequest {
			return &exocortexv1.BeforeMainLLMCallRequest{Call: c, Iteration: int32(t.iteration), Prompt: ifFull(f.history, promptMsgs), NumCtx: int32(a.window), PromptTokens: int32(prompt.tokens)}
		}, exocortexv1.PluginClient.BeforeMainLLMCall, nil); err != nil {
		return false, err
	}

	stage = "model"
	r, reasoning, err := a.callModel(ctx, t, prompt)
	if err != nil {
		return false, err
	}
	stage = "loop"
	reply = r.Content
	if err = fire(ctx, a, t, exocortexv1.Hook_HOOK_REASONING_STREAM_END,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.ReasoningStreamEndRequest {
			return &exocortexv1.ReasoningStreamEndRequest{Call: c, Text: reasoning}
		}, exocortexv1.PluginClient.ReasoningStreamEnd,
		func(ext *host.Extension, r *exocortexv1.ReasoningStreamEndResponse) error {
			a.reasoningDisplay(t, ext, r.Display)
			return nil
		}); err != nil {
		return false, err
	}
	if err = fire(ctx, a, t, exocortexv1.Hook_HOOK_RESPONSE_STREAM_END,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.ResponseStreamEndRequest {
			return &exocortexv1.ResponseStreamEndRequest{Call: c, Text: r.Content}
		}, exocortexv1.PluginClient.ResponseStreamEnd,
		func(ext *host.Extension, r *exocortexv1.ResponseStreamEndResponse) error {
			a.display(t, ext, r.Display)
			return nil
		}); err != nil {
		return false, err
	}
	if err = a.addMessage(ctx, t, a.newMessage("assistant", a.opts.AgentProfile, replyText(r))); err != nil {
		return false, err
	}

	// Repeat check: the same reply as the previous one of this monologue.
	key := replyKey(r)
	repeated := key != "" && key == *lastReply
	*lastReply = key
	if repeated {
		*unusable++
		if done, err := a.unusable(ctx, t, res, *unusable); done || err != nil {
			return done, err
		}
		_, err = a.injectSignal(ctx, t, signals.Repeat, nil)
		return false, err
	}

	req, perr := llm.ParseReply(r)
	if perr != nil {
		*unusable++
		if done, err := a.unusable(ctx, t, res, *unusable); done || err != nil {
			return done, err
		}
		return false, a.correct(ctx, t, r.Content, perr)
	}
	*unusable = 0

	toolCall = &exocortexv1.ToolCall{Id: req.CallID, Name: req.ToolName, ArgsJson: string(req.ToolArgs), Thoughts: req.Thoughts, Headline: req.Headline}
	stage = "tool"
	toolResult, err = a.runTool(ctx, t, toolCall)
	if err != nil {
		return false, err
	}
	stage = "loop"
	if toolResult != nil && toolResult.GetBreakLoop() {
		res.Response = toolResult.GetContent()
		a.emit(Event{Type: EventResponse, Iteration: t.iteration, Text: res.Response})
		return true, nil
	}
	return false, nil
}

// unusable stops the monologue when the unusable-reply limit is reached.
func (a *Agent) unusable(ctx context.Context, t *turn, res *Result, n int) (bool, error) {
	if n < a.opts.UnusableLimit {
		return false, nil
	}
	msg, err := a.injectSignal(ctx, t, signals.UnusableLimit, map[string]any{"count": n})
	if err != nil {
		return true, err
	}
	res.StopReason = signals.UnusableLimit
	res.Response = msg
	return true, &StopError{Reason: signals.UnusableLimit, Message: fmt.Sprintf("%d unusable replies in a row (misformatted, repeated or empty); the model is not following the reply format", n)}
}

// correct runs error_format for an unusable reply and adds the correction message
// with the misformat signal.
func (a *Agent) correct(ctx context.Context, t *turn, reply string, perr error) error {
	var pe *llm.ParseError
	fault := ""
	if errors.As(perr, &pe) {
		fault = string(pe.Fault)
	}
	var correction *string
	err := fire(ctx, a, t, exocortexv1.Hook_HOOK_ERROR_FORMAT,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.ErrorFormatRequest {
			return &exocortexv1.ErrorFormatRequest{Call: c, Reply: reply, Error: perr.Error(), Signal: signals.Misformat, ToolName: guessTool(reply), Fault: fault}
		}, exocortexv1.PluginClient.ErrorFormat,
		func(_ *host.Extension, r *exocortexv1.ErrorFormatResponse) error {
			if r.Correction != nil {
				c := r.GetCorrection()
				correction = &c
			}
			return nil
		})
	if err != nil {
		return err
	}
	if correction != nil {
		m := a.newMessage("user", "exocortex", *correction)
		m.Signal = signals.Misformat
		m.Metadata = map[string]string{"fault": fault}
		a.emit(Event{Type: EventSignal, Iteration: t.iteration, Signal: signals.Misformat, Text: *correction})
		return a.addMessage(ctx, t, m)
	}
	_, err = a.injectSignal(ctx, t, signals.Misformat, map[string]any{"error": perr.Error()})
	return err
}

// callModel streams the model's reply, firing response_stream_chunk and
// response_stream per piece of the reply, reasoning_stream_chunk and
// reasoning_stream per piece of its reasoning, and chat_model_call_before and
// chat_model_call_after around the call. It returns the reply and the
// reasoning.
func (a *Agent) callModel(ctx context.Context, t *turn, p assembled) (llm.Reply, string, error) {
	req := llm.ChatRequest{Model: a.opts.Model, Messages: p.messages, NumCtx: a.window}
	var toolNames []string
	if a.opts.NativeTools {
		for _, tl := range a.opts.Host.Tools() {
			req.Tools = append(req.Tools, llm.Tool{Name: tl.Spec.GetName(), Description: tl.Spec.GetDescription(), Parameters: []byte(tl.Spec.GetParametersJsonSchema())})
			toolNames = append(toolNames, tl.Spec.GetName())
		}
	}
	if err := fire(ctx, a, t, exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_BEFORE,
		func(c *exocortexv1.HookCall, f fields) *exocortexv1.ChatModelCallBeforeRequest {
			var prompt []*exocortexv1.Message
			if f.history {
				prompt = make([]*exocortexv1.Message, len(req.Messages))
				for i, m := range req.Messages {
					prompt[i] = &exocortexv1.Message{Role: m.Role, Content: m.Content}
				}
			}
			return &exocortexv1.ChatModelCallBeforeRequest{Call: c, Iteration: int32(t.iteration), Model: req.Model, Prompt: prompt,
				NumCtx: int32(req.NumCtx), PromptTokens: int32(p.tokens), Tools: toolNames}
		}, exocortexv1.PluginClient.ChatModelCallBefore, nil); err != nil {
		return llm.Reply{}, "", err
	}
	// Every chunk is an event (the operator sees it at once), but the hook fires
	// per piece of at least chunkCoalesce bytes (or a line) and at most every
	// chunkInterval: models stream a few characters at a time, and a round trip
	// to every stream extension per token would cost more than the generation.
	// The rest goes out when the reply is complete.
	var text strings.Builder
	pending := ""
	fired := time.Now() // the request counts as a firing: a reply that streams in faster goes in one piece
	flush := func() error {
		if pending == "" {
			return nil
		}
		delta, so := pending, text.String()
		pending, fired = "", time.Now()
		err := fire(ctx, a, t, exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK,
			func(hc *exocortexv1.HookCall, _ fields) *exocortexv1.ResponseStreamChunkRequest {
				return &exocortexv1.ResponseStreamChunkRequest{Call: hc, Delta: delta, Text: so}
			}, exocortexv1.PluginClient.ResponseStreamChunk,
			func(ext *host.Extension, r *exocortexv1.ResponseStreamChunkResponse) error {
				a.display(t, ext, r.Display)
				return nil
			})
		if err != nil {
			return err
		}
		return fire(ctx, a, t, exocortexv1.Hook_HOOK_RESPONSE_STREAM,
			func(hc *exocortexv1.HookCall, _ fields) *exocortexv1.ResponseStreamRequest {
				return &exocortexv1.ResponseStreamRequest{Call: hc, Text: so}
			}, exocortexv1.PluginClient.ResponseStream, nil)
	}
	// The reasoning streams the same way, at the same rate.
	var thought strings.Builder
	pendingThought := ""
	thoughtFired := time.Now()
	flushThought := func() error {
		if pendingThought == "" {
			return nil
		}
		delta, so := pendingThought, thought.String()
		pendingThought, thoughtFired = "", time.Now()
		return a.reasoningPiece(ctx, t, delta, so)
	}
	// Each stream goes through a secrets.Stream before anything sees it, so a
	// secret's value split across two chunks is masked too (a tail that may be
	// the start of one waits for the next chunk; nothing waits without secrets).
	replyMask, thoughtMask := a.masker().NewStream(), a.masker().NewStream()
	thinking := func(piece string) error {
		if piece == "" {
			return nil
		}
		if err := a.reasoningChunk(ctx, t, piece); err != nil {
			return err
		}
		thought.WriteString(piece)
		pendingThought += piece
		return nil
	}
	content := func(piece string) {
		if piece == "" {
			return
		}
		text.WriteString(piece)
		pending += piece
		a.emit(Event{Type: EventLLMChunk, Iteration: t.iteration, Text: piece})
	}
	r, err := a.opts.LLM.Chat(ctx, req, func(c llm.Chunk) error {
		if c.Thinking != "" {
			if err := thinking(thoughtMask.Write(c.Thinking)); err != nil {
				return err
			}
			if len(pendingThought) >= chunkCoalesce || strings.Contains(pendingThought, "\n") {
				if time.Since(thoughtFired) >= chunkInterval {
					if err := flushThought(); err != nil {
						return err
					}
				}
			}
		}
		if c.Content == "" {
			return nil
		}
		// The reply's text begins: the reasoning before it goes out first.
		if err := thinking(thoughtMask.Flush()); err != nil {
			return err
		}
		if err := flushThought(); err != nil {
			return err
		}
		content(replyMask.Write(c.Content))
		if len(pending) < chunkCoalesce && !strings.Contains(pending, "\n") || time.Since(fired) < chunkInterval {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = thinking(thoughtMask.Flush())
	}
	if err == nil {
		err = flushThought()
	}
	if err == nil {
		content(replyMask.Flush())
		err = flush()
	}
	if err != nil {
		return llm.Reply{}, "", fmt.Errorf("model %s: %w", a.opts.Model, err)
	}
	a.tokens.observe(p.messages, r.Usage.PromptTokens, a.window)
	a.emit(Event{
		Type: EventLLMReply, Iteration: t.iteration, Text: r.Content,
		PromptTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.OutputTokens,
		TokensPerSec: r.Usage.TokensPerSecond(), ContextFill: r.Usage.ContextFill(),
		NativeCalls: nativeCalls(r.ToolCalls),
	})
	var calls []*exocortexv1.ToolCall
	for _, tc := range r.ToolCalls {
		calls = append(calls, &exocortexv1.ToolCall{Id: tc.ID, Name: tc.Name, ArgsJson: orEmpty(tc.Arguments)})
	}
	if err := fire(ctx, a, t, exocortexv1.Hook_HOOK_CHAT_MODEL_CALL_AFTER,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.ChatModelCallAfterRequest {
			return &exocortexv1.ChatModelCallAfterRequest{Call: c, Iteration: int32(t.iteration), Model: req.Model, Response: r.Content,
				Reasoning: thought.String(), ToolCalls: calls,
				PromptTokens: int32(r.Usage.PromptTokens), OutputTokens: int32(r.Usage.OutputTokens)}
		}, exocortexv1.PluginClient.ChatModelCallAfter,
		func(_ *host.Extension, resp *exocortexv1.ChatModelCallAfterResponse) error {
			if resp.Response != nil {
				r.Content = resp.GetResponse()
			}
			return nil
		}); err != nil {
		return llm.Reply{}, "", err
	}
	return r, thought.String(), nil
}

// reasoningPiece fires reasoning_stream_chunk and reasoning_stream for a piece
// of the reasoning (delta) and the reasoning so far.
func (a *Agent) reasoningPiece(ctx context.Context, t *turn, delta, so string) error {
	err := fire(ctx, a, t, exocortexv1.Hook_HOOK_REASONING_STREAM_CHUNK,
		func(hc *exocortexv1.HookCall, _ fields) *exocortexv1.ReasoningStreamChunkRequest {
			return &exocortexv1.ReasoningStreamChunkRequest{Call: hc, Delta: delta, Text: so}
		}, exocortexv1.PluginClient.ReasoningStreamChunk,
		func(ext *host.Extension, r *exocortexv1.ReasoningStreamChunkResponse) error {
			a.reasoningDisplay(t, ext, r.Display)
			return nil
		})
	if err != nil {
		return err
	}
	return fire(ctx, a, t, exocortexv1.Hook_HOOK_REASONING_STREAM,
		func(hc *exocortexv1.HookCall, _ fields) *exocortexv1.ReasoningStreamRequest {
			return &exocortexv1.ReasoningStreamRequest{Call: hc, Text: so}
		}, exocortexv1.PluginClient.ReasoningStream, nil)
}

// reasoningDisplay passes an extension's replacement for the shown reasoning
// to the observer.
func (a *Agent) reasoningDisplay(t *turn, ext *host.Extension, d *string) {
	if d != nil {
		a.emit(Event{Type: EventReasoningDisplay, Iteration: t.iteration, Extension: ext.Name(), Text: *d})
	}
}

// exception runs message_loop_exception for an iteration's error and returns
// the error the iteration ends with: nil when an extension handled it. A
// cancelled turn and a stop are not exceptions.
func (a *Agent) exception(ctx context.Context, t *turn, stage string, err error) error {
	var stop *StopError
	if ctx.Err() != nil || errors.As(err, &stop) {
		return err
	}
	var he *HookError
	var re *RequiredError
	if errors.As(err, &he) || errors.As(err, &re) {
		stage = "extension"
	}
	handled, by := false, ""
	ferr := fire(ctx, a, t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_EXCEPTION,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.MessageLoopExceptionRequest {
			return &exocortexv1.MessageLoopExceptionRequest{Call: c, Iteration: int32(t.iteration), Error: err.Error(), Stage: stage}
		}, exocortexv1.PluginClient.MessageLoopException,
		func(ext *host.Extension, r *exocortexv1.MessageLoopExceptionResponse) error {
			if r.GetHandled() && !handled {
				handled, by = true, ext.Name()
			}
			return nil
		})
	if ferr != nil || !handled {
		return err
	}
	a.log.Warn("iteration error handled by an extension; the monologue goes on", "extension", by, "stage", stage, "err", err)
	a.emit(Event{Type: EventNotice, Iteration: t.iteration, Extension: by, Text: fmt.Sprintf("%s handled the error of iteration %d: %v", by, t.iteration, err)})
	return nil
}

// reasoningChunk is where a piece of the model's reasoning arrives, before
// the reply text it precedes. The reasoning is shown, not kept: the reply
// text alone is parsed and goes into the history.
func (a *Agent) reasoningChunk(_ context.Context, t *turn, delta string) error {
	a.emit(Event{Type: EventReasoning, Iteration: t.iteration, Text: delta})
	return nil
}

// injectSignal adds the core's message for a signal, rendered from the prompt
// file that declares the signal, and returns its text.
func (a *Agent) injectSignal(ctx context.Context, t *turn, signal string, vars map[string]any) (string, error) {
	p, err := a.opts.Prompts.LoadSignal(signal)
	if err != nil {
		return "", err
	}
	text, err := p.Render(vars)
	if err != nil {
		return "", err
	}
	text = strings.TrimSpace(text)
	m := a.newMessage("user", "exocortex", text)
	m.Signal = signal
	a.emit(Event{Type: EventSignal, Iteration: t.iteration, Signal: signal, Text: text})
	return text, a.addMessage(ctx, t, m)
}

// newMessage makes a message whose id is a UUIDv7: ids sort in the order the
// messages were made (monotonic within the process), so what is keyed by
// them (the history archive's memory records, msg-ID) breaks equal search
// scores the same way in a session and in its replay; v4 ids made that order
// a coin toss per run (docs/replay.md).
func (a *Agent) newMessage(role, sender, content string) *exocortexv1.Message {
	return &exocortexv1.Message{
		Id: newMessageID(), Role: role, SenderId: sender, Content: content,
		TimestampUtc: time.Now().UTC().Format(time.RFC3339Nano),
	}
}

// addMessage runs hist_add_before for m and appends it to the history (and the
// session file).
func (a *Agent) addMessage(ctx context.Context, t *turn, m *exocortexv1.Message) error {
	prev := t.message
	t.message = m
	a.maskMessage(m)
	err := fire(ctx, a, t, exocortexv1.Hook_HOOK_HIST_ADD_BEFORE,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.HistAddBeforeRequest {
			return &exocortexv1.HistAddBeforeRequest{Call: c, Message: m}
		}, exocortexv1.PluginClient.HistAddBefore,
		func(_ *host.Extension, r *exocortexv1.HistAddBeforeResponse) error {
			if r.Content != nil {
				m.Content = r.GetContent()
			}
			return nil
		})
	t.message = prev
	if err != nil {
		return err
	}
	a.maskMessage(m)
	if s := a.opts.Session; s != nil {
		if err := s.Append(ctx, m); err != nil {
			return err
		}
	}
	a.history = append(a.history, m)
	t.added = append(t.added, m)
	a.emit(Event{Type: EventMessage, Iteration: t.iteration, Role: m.GetRole(), Signal: m.GetSignal(), Text: m.GetContent(), Tool: m.GetToolName()})
	return nil
}

// replyText is what the history keeps of a reply: its text, or its native tool
// calls as JSON when it had no text.
func replyText(r llm.Reply) string {
	if strings.TrimSpace(r.Content) != "" || len(r.ToolCalls) == 0 {
		return r.Content
	}
	var b strings.Builder
	for _, tc := range r.ToolCalls {
		fmt.Fprintf(&b, `{"tool_name": %q, "tool_args": %s}`, tc.Name, orEmpty(tc.Arguments))
	}
	return b.String()
}

func orEmpty(b []byte) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}

// replyKey identifies a reply for the repeat check: Agent Zero compares the
// whole reply with the previous one.
func replyKey(r llm.Reply) string {
	k := strings.TrimSpace(r.Content)
	for _, tc := range r.ToolCalls {
		k += "\x00" + tc.Name + string(tc.Arguments)
	}
	return k
}

// guessTool pulls a tool name out of an unusable reply, for error_format.
func guessTool(reply string) string {
	for _, key := range []string{`"tool_name"`, `"tool"`} {
		i := strings.Index(reply, key)
		if i < 0 {
			continue
		}
		rest := reply[i+len(key):]
		j := strings.IndexByte(rest, '"')
		if j < 0 {
			continue
		}
		rest = rest[j+1:]
		if k := strings.IndexByte(rest, '"'); k > 0 {
			return rest[:k]
		}
	}
	return ""
}

// chunkCoalesce is the smallest piece of a streamed reply that fires
// response_stream_chunk (a line break fires it too), and chunkInterval the
// shortest time between two firings: 20 a second is as fast as a display is read.
const (
	chunkCoalesce = 64
	chunkInterval = 50 * time.Millisecond
)

// display passes an extension's replacement for the shown reply to the observer.
func (a *Agent) display(t *turn, ext *host.Extension, d *string) {
	if d != nil {
		a.emit(Event{Type: EventDisplay, Iteration: t.iteration, Extension: ext.Name(), Text: *d})
	}
}

// newMessageID is a UUIDv7 (time-ordered), or a v4 in the unlikely case
// the random source fails.
func newMessageID() string {
	if id, err := uuid.NewV7(); err == nil {
		return id.String()
	}
	return uuid.NewString()
}
