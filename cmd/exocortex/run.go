package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/staging"
	"github.com/exocortex/exocortex/tui"
)

// agentFlags are the flags shared by `run` and the operator session.
type agentFlags struct {
	model         string
	provider      string
	sessionName   string
	approval      string
	numCtx        int
	maxIterations int
	// emitContext adds the ACP context object to hook events (run --context).
	emitContext bool
	// allowWiringErrors starts plugins with wiring-lint errors anyway.
	allowWiringErrors bool
	// record adds each request and tool result to the events (run --json).
	record bool
}

func (f *agentFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.model, "model", "", `model name, or "script:FILE" to replay a scripted model (overrides config and EXOCORTEX_MODEL)`)
	cmd.Flags().StringVar(&f.provider, "provider", "", `model server protocol: "ollama" or "openai" (an OpenAI-compatible server; overrides config and EXOCORTEX_PROVIDER)`)
	cmd.Flags().StringVar(&f.sessionName, "session", "", "session name: its history and state are loaded and saved")
	cmd.Flags().StringVar(&f.approval, "approval", "", "approval mode for held tool calls: default, auto-edit or yolo")
	cmd.Flags().IntVar(&f.numCtx, "num-ctx", 0, "context window in tokens, sent with every request (default: the model's own, capped by max_num_ctx)")
	cmd.Flags().IntVar(&f.maxIterations, "max-iterations", 0, "iterations allowed per monologue")
	cmd.Flags().BoolVar(&f.allowWiringErrors, "allow-wiring-errors", false, "start plugins the wiring lint finds errors in (by default they are kept out, as hot reload keeps out a new version with errors)")
}

// apply puts the flags over the configuration. A negative or zero count is
// refused, naming the flag (cobra has no unsigned flag that says so itself).
func (f *agentFlags) apply(a *app) error {
	if f.numCtx < 0 {
		return fmt.Errorf("--num-ctx %d: give a positive number of tokens (e.g. 8192)", f.numCtx)
	}
	if f.maxIterations < 0 {
		return fmt.Errorf("--max-iterations %d: give a positive number of iterations (e.g. 25)", f.maxIterations)
	}
	if f.model != "" {
		a.cfg.Model = f.model
	}
	if f.provider != "" {
		if err := config.CheckProvider(f.provider); err != nil {
			return &exitError{2, fmt.Errorf("--provider: %w", err)}
		}
		a.cfg.Provider = f.provider
	}
	if f.approval != "" {
		a.cfg.Approval = f.approval
	}
	if f.numCtx > 0 {
		a.cfg.NumCtx = f.numCtx
	}
	if f.maxIterations > 0 {
		a.cfg.MaxIterations = f.maxIterations
	}
	a.allowWiringErrors = f.allowWiringErrors
	return nil
}

// runtime is a started host, model and agent.
type runtime struct {
	host    *host.Host
	agent   *loop.Agent
	llm     llm.Provider
	model   string
	session *session.Session
	// closeStore releases the session store (the shared bucket's connection).
	closeStore func()
	stop       func()
}

func (r *runtime) close() {
	if r.session != nil {
		r.session.Close()
	}
	if r.closeStore != nil {
		r.closeStore()
	}
	if r.host != nil {
		r.host.Close()
	}
	if r.stop != nil {
		r.stop()
	}
}

// start loads the plugins, the model client and the session, and builds the agent.
func (a *app) start(ctx context.Context, f *agentFlags, sessionName string, observer func(loop.Event), approver loop.Approver) (*runtime, error) {
	if err := f.apply(a); err != nil {
		return nil, err
	}
	mode, err := loop.ParseApprovalMode(a.cfg.Approval)
	if err != nil {
		return nil, err
	}
	r := &runtime{}
	r.llm, r.model, r.stop, err = a.model()
	if err != nil {
		return nil, err
	}
	// Hot reload: rebuilt plugins are swapped in between iterations.
	r.host, err = a.openLiveHost(ctx, nil)
	if err != nil {
		r.close()
		return nil, err
	}
	if sessionName != "" {
		var st session.Store
		st, r.closeStore, err = sessionStore(ctx, a.home, journalSetting(a.cfg), a.log)
		if err == nil {
			r.session, err = st.Open(ctx, sessionName)
		}
		if err != nil {
			r.close()
			return nil, err
		}
	}
	wd, _ := os.Getwd()
	dirs := a.promptDirs(wd)
	opts := a.agentOptions(r.host, r.llm, prompts.NewLoader(dirs...), r.model)
	opts.Session, opts.ApprovalMode, opts.Approver, opts.Observer = r.session, mode, approver, observer
	opts.EmitContext = f.emitContext
	opts.RecordRequests = f.record
	if err := a.record(&opts); err != nil {
		r.close()
		return nil, err
	}
	r.agent, err = loop.New(opts)
	if err != nil {
		r.close()
		return nil, err
	}
	r.host.Services().SetSubordinateRunner(r.agent.RunSubordinate)
	r.host.Services().SetEmbeddingSink(r.agent.ReportEmbeddingChange)
	r.host.Services().SetUtilityRunner(r.agent.CallUtility)
	return r, nil
}

func newRunCmd() *cobra.Command {
	var f agentFlags
	var prompt string
	var asJSON, showContext bool
	cmd := &cobra.Command{
		Use:   "run -p PROMPT",
		Short: "Run one monologue on a prompt and print the answer (the scripted entry point)",
		Long: `Run one monologue: the agent works on PROMPT until it answers with the response
tool or is stopped. The answer goes to stdout; plugin problems, notices, retried
model requests and the model's reasoning (folded to one line per stretch:
"✻ Thought for 2.1s · 1,234 chars") to stderr.

With --json, every event goes to stdout as one JSON object per line: first the
model (type "model": provider, model, base_url), then hook calls
(hook, extension, plugin, order, duration_us, keys read and written, error, and
batch/batch_index when it shared a round trip), a hook_done per hook firing (its
wall time and round_trips), model chunks and replies, tool calls and results,
signals, the model's reasoning as it streams (type "reasoning", never part of
the reply), and the final response. Every request is sized first: a budget event
gives the window, each part's tokens (system prompt, tool documentation, blocks,
summary, history) and what was left out and why; a compression event reports
each history compression (messages summarised, method, summary); the last line
is a context event with the state of the context window (as /context shows it).`,
		Example: `  exocortex run -p "What is in README.md?"
  exocortex run -p "hello" --model script:examples/scripts/hello.yaml --json
  OPENAI_BASE_URL=http://127.0.0.1:1234/v1 exocortex run --provider openai --model qwen3-8b -p "hi"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(prompt) == "" {
				return &exitError{2, errors.New("run needs a prompt: exocortex run -p \"...\" (or - to read it from stdin)")}
			}
			if prompt == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				prompt = string(b)
			}
			a, err := loadApp()
			if err != nil {
				return err
			}
			defer a.close()
			// The sandbox's probe beside the start-up; reportSandbox waits for it.
			probe := probeSandbox(a.home)
			out := cmd.OutOrStdout()
			enc := newEventEncoder(out)
			var observer func(loop.Event)
			if asJSON {
				observer = enc.event
				a.setNotify(func(msg string) { enc.event(loop.Event{Type: loop.EventNotice, Text: msg}) })
				// The host's failure reports (a crash, a command hook's
				// warning) as notices, named by their kind.
				a.failureEvents = func(e host.Event, line string) {
					enc.event(loop.Event{Type: loop.EventNotice, Plugin: e.Plugin, Extension: e.Extension, Hook: e.Hook, Code: e.Kind, Text: line})
				}
			} else {
				a.setNotify(func(msg string) { fmt.Fprintln(cmd.ErrOrStderr(), "notice:", msg) })
				// The model's reasoning is one folded line on stderr per
				// stretch; --json has it in full as reasoning events.
				fold := tui.NewReasoningFold(nil)
				var failed hookFailures
				observer = func(e loop.Event) {
					if line := failed.line(e); line != "" {
						fmt.Fprintln(cmd.ErrOrStderr(), line)
					}
					if line, ok := fold.Observe(e); ok {
						who := ""
						if e.Agent != "" {
							who = e.Agent + ": "
						}
						fmt.Fprintln(cmd.ErrOrStderr(), who+line+" (--json shows it)")
					}
				}
			}
			ctx := cmd.Context()
			f.emitContext, f.record = showContext, asJSON
			staged := filepath.Join(a.home, staging.InboxFile)
			quarantinedBefore := 0
			if !asJSON {
				a.failures = cmd.ErrOrStderr()
				if q, err := staging.Quarantined(staged); err == nil {
					quarantinedBefore = len(q)
				}
				defer reportQuarantine(cmd.ErrOrStderr(), staged, quarantinedBefore)
			}
			started := time.Now().UTC()
			r, err := a.start(ctx, &f, f.sessionName, observer, nil)
			if err != nil {
				return err
			}
			defer r.close()
			if asJSON {
				enc.encode(modelEvent{Time: time.Now().UTC(), Type: "model", Provider: r.llm.Name(), Model: r.model, BaseURL: r.llm.BaseURL(), Scripted: scriptOf(a.cfg.Model)})
			}
			reportLoad(cmd.ErrOrStderr(), r.host, asJSON, enc)
			reportMCP(cmd.ErrOrStderr(), a.home, started, asJSON, enc)
			reportSandbox(cmd.ErrOrStderr(), a, probe, asJSON, enc)
			if d := prompts.UntrustedOverrides(cwd(), a.home, a.cfg.TrustedProjects); d != "" {
				msg := fmt.Sprintf("the prompt overrides in %s are not loaded: this project is not trusted (exocortex trust, if you mean them)", d)
				if asJSON {
					enc.event(loop.Event{Type: loop.EventNotice, Text: msg})
				} else {
					fmt.Fprintln(cmd.ErrOrStderr(), "warning:", msg)
				}
			}
			if !strings.HasPrefix(a.cfg.Model, "script:") {
				if _, err := r.llm.Probe(ctx, r.model); err != nil {
					return err
				}
			}
			res, err := r.agent.Monologue(ctx, prompt)
			if asJSON {
				rep := r.agent.Context()
				enc.event(loop.Event{Type: loop.EventContext, ContextReport: &rep})
			}
			if res != nil && !asJSON {
				for _, n := range res.Notices {
					fmt.Fprintln(cmd.ErrOrStderr(), "notice:", n)
				}
				if res.Response != "" && err == nil {
					fmt.Fprintln(out, res.Response)
				}
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&prompt, "prompt", "p", "", "the prompt (- reads it from stdin)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "write every event as a JSON line")
	cmd.Flags().BoolVar(&showContext, "context", false, "with --json, include the ACP context object in every hook event")
	f.register(cmd)
	return cmd
}

// modelEvent is run --json's first line: which server and model the run
// talks to. (The API key, if any, is never part of it.)
type modelEvent struct {
	Time     time.Time `json:"time"`
	Type     string    `json:"type"` // "model"
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	BaseURL  string    `json:"base_url"`
	Scripted string    `json:"scripted,omitempty"`
}

// scriptOf is FILE of a "script:FILE" model, "" otherwise.
func scriptOf(model string) string {
	file, _ := strings.CutPrefix(model, "script:")
	if file == model {
		return ""
	}
	return file
}

// reportQuarantine prints one line for each staging line quarantined during
// this run (the file's entries beyond the before that were there at start), so
// a line set aside by the memory plugins does not pass unseen.
func reportQuarantine(w io.Writer, path string, before int) {
	q, err := staging.Quarantined(path)
	if err != nil {
		fmt.Fprintln(w, "warning:", err)
		return
	}
	for _, b := range q[min(before, len(q)):] {
		fmt.Fprintf(w, "warning: line %d of %s was quarantined (%s); the records around it were kept, and the line is in %s.quarantine: correct it and stage it again (staging_note), or delete it there if it is not needed\n", b.Line, path, b.Reason, path)
	}
}

// reportLoad tells the operator about plugins that did not load, were kept
// out for wiring errors or skipped (the host's notices), or are shadowed.
func reportLoad(w io.Writer, h *host.Host, asJSON bool, enc *eventEncoder) {
	for _, n := range h.Notices() {
		if asJSON {
			enc.event(loop.Event{Type: loop.EventNotice, Text: n})
			continue
		}
		fmt.Fprintln(w, "warning:", n)
	}
	for _, fe := range h.FailedPlugins() {
		if host.KeptOut(fe) {
			continue // its notice says why
		}
		if asJSON {
			enc.event(loop.Event{Type: loop.EventNotice, Plugin: fe.Plugin, Error: fe.Error(), Text: "plugin failed to load"})
			continue
		}
		fmt.Fprintln(w, "warning:", fe.Error())
	}
	for _, s := range h.Shadows() {
		msg := fmt.Sprintf("%s %q of %s is shadowed by %s", s.Kind, s.Name, s.Hidden, s.By)
		if asJSON {
			enc.event(loop.Event{Type: loop.EventNotice, Text: msg})
			continue
		}
		fmt.Fprintln(w, "note:", msg)
	}
}

func durations(m map[string]config.Duration) map[string]time.Duration {
	out := make(map[string]time.Duration, len(m))
	for k, v := range m {
		out[k] = time.Duration(v)
	}
	return out
}

// agentOptions are the loop's options from the configuration; the caller adds the
// session, approvals and observer. The scripted entry point and the terminal
// session both start from here, so they cannot drift apart.
func (a *app) agentOptions(h *host.Host, client llm.Provider, loader *prompts.Loader, model string) loop.Options {
	return loop.Options{
		Host: h, LLM: client, Prompts: loader, Model: model,
		NumCtx: a.cfg.NumCtx, MaxNumCtx: a.cfg.MaxNumCtx, MaxIterations: a.cfg.MaxIterations, UnusableLimit: a.cfg.UnusableLimit,
		MaxResumes:   a.cfg.CommandHooks.WithDefaults().StopContinues,
		UtilityModel: a.cfg.UtilityModel, CompressTimeout: time.Duration(a.cfg.Timeouts.Compress), FullToolDocs: a.cfg.FullToolDocs,
		PersistentState: filepath.Join(a.home, "state.json"), Logger: a.log,
		ToolTimeout: time.Duration(a.cfg.Timeouts.Tool), ToolTimeouts: durations(a.cfg.Timeouts.Tools),
		TimeBudgets: loop.TimeBudgets{Stream: time.Duration(a.cfg.TimeBudgets.Stream), Iteration: time.Duration(a.cfg.TimeBudgets.Iteration),
			StopAfter: a.cfg.TimeBudgets.StopAfter, Hooks: durations(a.cfg.TimeBudgets.Hooks)},
	}
}
