package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/renameio/v2"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
	"github.com/exocortex/exocortex/memory/service"
	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/staging"
	"github.com/exocortex/exocortex/tui/slash"
	"github.com/exocortex/exocortex/tui/transcript"
)

// Commands returns the slash-command table. The frontends handle help, clear,
// expand and quit themselves; Engine.Exec runs the rest.
func Commands() *slash.Registry {
	return slash.New(
		slash.Command{Name: "help", Aliases: []string{"?"}, Args: "[COMMAND]", Summary: "the commands and keys, or one command in detail"},
		slash.Command{Name: "clear", Summary: "clear the screen (the session and the agent's context stay; /new starts afresh)"},
		slash.Command{Name: "model", Args: "[NAME]", Summary: "the model and its server, or switch to NAME", Kind: slash.KindModel},
		slash.Command{Name: "memory", Summary: "the long-term memory store", Subs: []slash.Sub{
			{Name: "stats", Summary: "records by area and status, index state"},
			{Name: "search", Args: "QUERY", Summary: "the memories nearest to QUERY, and why"},
			{Name: "add", Args: "TEXT", Summary: "save TEXT as a memory (area main)"},
			{Name: "forget", Args: "QUERY", Summary: "delete the memories similar to QUERY"},
		}},
		slash.Command{Name: "plugins", Summary: "the plugins and their health", Subs: []slash.Sub{
			{Name: "list", Summary: "every plugin: state, source, extensions, tools"},
			{Name: "status", Args: "[NAME]", Summary: "hooks and orders, crashes, last error, stderr", Kind: slash.KindPlugin},
			{Name: "reload", Args: "NAME", Summary: "restart a plugin from its file", Kind: slash.KindPlugin},
		}},
		slash.Command{Name: "tools", Summary: "the tools the agent can call, and which plugin serves each"},
		slash.Command{Name: "wiring", Summary: "the hooks that fired in the last turn, in order, with timings and the state keys read and written"},
		slash.Command{Name: "context", Summary: "the context window: budget, compression, summary", Subs: []slash.Sub{
			{Name: "json", Summary: "the summary, then the context object the last hook received, as JSON"},
			{Name: "compress", Summary: "compress the history now (every message but the newest into the summary); words after it are instructions for the summary"},
		}},
		slash.Command{Name: "stats", Summary: "tokens, model latency, tool and hook time of this run"},
		slash.Command{Name: "approval", Args: "[default|auto-edit|yolo]", Summary: "show or set which held tool calls run without asking (shift+tab cycles)", Kind: slash.KindMode},
		slash.Command{Name: "thoughts", Summary: "the reflections written on empty prompts (the cohesion loop)"},
		slash.Command{Name: "sessions", Summary: "the saved sessions, newest first"},
		slash.Command{Name: "resume", Args: "NAME", Summary: "continue a saved session", Kind: slash.KindSession},
		slash.Command{Name: "new", Args: "[NAME]", Summary: "start a new session"},
		slash.Command{Name: "rename", Args: "NAME", Summary: "rename this session"},
		slash.Command{Name: "export", Summary: "write this session to a file", Subs: []slash.Sub{
			{Name: "md", Args: "FILE", Summary: "Markdown, for reading", Kind: slash.KindFile},
			{Name: "json", Args: "FILE", Summary: "every message as JSON (what /import reads)", Kind: slash.KindFile},
		}},
		slash.Command{Name: "import", Args: "FILE", Summary: "open a session from a /export json file", Kind: slash.KindFile},
		slash.Command{Name: "expand", Args: "[N]", Summary: "show tool call or thought N in full (ctrl+o: the last one)"},
		slash.Command{Name: "details", Args: "[N]", Summary: "show notice N in full (the last one by default)"},
		slash.Command{Name: "quit", Aliases: []string{"exit", "q"}, Summary: "leave (ctrl+d on an empty line does too)"},
	)
}

// Output is what a command printed.
type Output struct {
	Title string
	Text  string
	// Switched is set when the command opened another session.
	Switched bool
	// Table is set for column output: lines are cut at the screen's width
	// rather than wrapped.
	Table bool
}

// Exec runs a command that needs the runtime. Commands that change the
// session or the model refuse to run during a turn.
func (e *Engine) Exec(ctx context.Context, in slash.Invocation) (Output, error) {
	switch in.Name {
	case "model":
		return e.cmdModel(ctx, in)
	case "memory":
		return e.cmdMemory(ctx, in)
	case "plugins":
		return e.cmdPlugins(ctx, in)
	case "tools":
		return e.cmdTools()
	case "wiring":
		return Output{Title: "wiring of the last turn", Text: FormatWiring(e.LastWiring())}, nil
	case "context":
		return e.cmdContext(ctx, in)
	case "stats":
		return Output{Title: "stats", Text: FormatStats(e.Stats(), e.cfg.NumCtx)}, nil
	case "approval":
		return e.cmdApproval(in)
	case "thoughts":
		return e.cmdThoughts()
	case "sessions":
		return e.cmdSessions()
	case "resume":
		if in.Arg(0) == "" {
			return Output{}, errors.New("/resume needs a session name; /sessions lists them")
		}
		if !e.SessionExists(in.Arg(0)) {
			return Output{}, fmt.Errorf("no session called %s; /sessions lists them", in.Arg(0))
		}
		s, err := e.OpenSession(ctx, in.Arg(0))
		if err != nil {
			return Output{}, err
		}
		return Output{Text: "resumed session " + s.Name(), Switched: true}, nil
	case "new":
		s, err := e.NewSession(ctx, in.Arg(0))
		if err != nil {
			return Output{}, err
		}
		return Output{Text: "new session " + s.Name(), Switched: true}, nil
	case "rename":
		if in.Arg(0) == "" {
			return Output{}, errors.New("/rename needs the new name")
		}
		old := ""
		if s := e.Session(); s != nil {
			old = s.Name()
		}
		s, err := e.Rename(ctx, in.Arg(0))
		if err != nil {
			return Output{}, err
		}
		return Output{Text: fmt.Sprintf("renamed session %s to %s", old, s.Name())}, nil
	case "export":
		return e.cmdExport(in)
	case "import":
		return e.cmdImport(ctx, in)
	}
	return Output{}, fmt.Errorf("/%s is handled by the terminal, not the engine", in.Name)
}

func (e *Engine) cmdModel(ctx context.Context, in slash.Invocation) (Output, error) {
	if name := in.Arg(0); name != "" {
		if e.cfg.Scripted != "" {
			return Output{}, fmt.Errorf("the model is scripted (%s); start without --model script:... to choose one", e.cfg.Scripted)
		}
		info, err := e.SetModel(ctx, name)
		if err != nil {
			return Output{}, err
		}
		return Output{Text: fmt.Sprintf("model %s (context %s)", info.Model, ctxLen(info.ContextLength))}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "model    %s\n", e.Model())
	if e.cfg.Scripted != "" {
		fmt.Fprintf(&b, "source   %s (a scripted model replaying replies)\n", e.cfg.Scripted)
	}
	fmt.Fprintf(&b, "provider %s\n", e.cfg.provider())
	fmt.Fprintf(&b, "server   %s\n", e.cfg.Address)
	if e.cfg.provider() == llm.ProviderOllama {
		fmt.Fprintf(&b, "num_ctx  %d tokens sent with every request\n", e.cfg.NumCtx)
	}
	info, err := e.Probe(ctx)
	if err != nil {
		fmt.Fprintf(&b, "status   %v\n", err)
		return Output{Title: "model", Text: b.String()}, nil
	}
	fmt.Fprintf(&b, "status   answered (%s); context %s; capabilities %s\n", serverVersion(e.cfg.provider(), info.Version), ctxLen(info.ContextLength), strings.Join(info.Capabilities, ", "))
	if len(info.Models) > 0 {
		fmt.Fprintf(&b, "models   %s\n", strings.Join(info.Models, ", "))
		b.WriteString("switch with /model NAME")
	}
	return Output{Title: "model", Text: b.String()}, nil
}

// serverVersion names the server that answered: "Ollama 0.17.4" or "openai-compatible".
func serverVersion(provider, version string) string {
	if provider == llm.ProviderOllama {
		return "Ollama " + version
	}
	return version
}

func ctxLen(n int) string {
	if n == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d tokens", n)
}

// errMemoryHeld reports a store no memory service answers for: a process
// that predates the service holds it.
type errMemoryHeld struct{ err error }

func (e *errMemoryHeld) Error() string {
	return "the memory store is held by a process that does not serve it (" + e.err.Error() + ")"
}

func (e *errMemoryHeld) Unwrap() error { return e.err }

// memoryWait bounds how long a /memory command waits for the owner of the
// store to answer.
const memoryWait = 3 * time.Second

// withMemory runs one command through the home's memory service: a client of
// the owner (the session's plugins, another terminal, a CLI command), or, with
// none running, the owner itself for the command's length, with the configured
// embedder, so it ranks as the agent's recall does. No journal is copied.
func (e *Engine) withMemory(ctx context.Context, write bool, fn func(service.Remote) (Output, error)) (Output, error) {
	dir := e.cfg.MemoryDir
	if !write && !exists(filepath.Join(dir, memory.JournalFile)) {
		return Output{Title: "memory", Text: "the memory store is empty (nothing saved in " + dir + " yet)"}, nil
	}
	c, err := e.connectMemory(ctx, memoryWait)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, new(*staging.LockedError)) {
			return Output{}, &errMemoryHeld{err}
		}
		return Output{}, err
	}
	defer c.Close()
	return fn(service.Remote{C: c})
}

// connectMemory reaches the memory service of the engine's store.
func (e *Engine) connectMemory(ctx context.Context, wait time.Duration) (*service.Client, error) {
	dir := e.cfg.MemoryDir
	home := filepath.Dir(dir)
	log := slog.New(slog.DiscardHandler)
	return service.Connect(ctx, service.Config{Dir: dir, Wait: wait, Logger: log,
		Describe: func(m memory.Embedder) string { return embed.Describe(m) },
		Options: memory.Options{Logger: log, LoadEmbedder: func() (memory.Embedder, error) {
			return embed.Open(context.WithoutCancel(ctx), embed.ConfiguredSpec(e.cfg.Embedder), home)
		}}})
}

func (e *Engine) memorySource() memory.Source {
	src := memory.Source{Source: "tui"}
	if s := e.Session(); s != nil {
		src.Session = s.ID()
	}
	return src
}

// memoryTool runs a memory command through the memory plugin's tool when the
// plugin holds the store.
func (e *Engine) memoryTool(ctx context.Context, held error, title, tool string, args map[string]any) (Output, error) {
	var mh *errMemoryHeld
	if !errors.As(held, &mh) {
		return Output{}, held
	}
	if !e.hasTool(tool) {
		return Output{}, fmt.Errorf("%v; no plugin offers %s to go through, so retry when that process has finished", held, tool)
	}
	res, err := e.callTool(ctx, tool, args, time.Minute)
	if err != nil {
		return Output{}, err
	}
	if res.GetError() != "" {
		return Output{}, fmt.Errorf("%s: %s", tool, res.GetError())
	}
	return Output{Title: title + " (through " + tool + ", the memory plugin holds the store)", Text: strings.TrimSpace(res.GetContent())}, nil
}

func (e *Engine) cmdMemory(ctx context.Context, in slash.Invocation) (Output, error) {
	sub := in.Arg(0)
	arg := in.RestAfter(1)
	switch sub {
	case "", "stats":
		out, err := e.withMemory(ctx, false, func(s service.Remote) (Output, error) {
			st, err := s.Stats(ctx)
			if err != nil {
				return Output{}, err
			}
			return Output{Title: "memory", Text: formatMemoryStats(st.Stats)}, nil
		})
		var mh *errMemoryHeld
		if errors.As(err, &mh) {
			return Output{Title: "memory (held without a memory service)", Text: e.journalSummary() +
				"\nrecord counts: `exocortex memory stats` once that process has finished, or /memory search"}, nil
		}
		return out, err
	case "search":
		if arg == "" {
			return Output{}, errors.New("/memory search needs a query")
		}
		out, err := e.withMemory(ctx, false, func(s service.Remote) (Output, error) {
			// The agent's recall's own options, so the list ranks as recall does.
			res, err := s.Search(ctx, arg, service.Options(protocol.RecallSearchOptions()))
			if err != nil {
				return Output{}, err
			}
			var b strings.Builder
			if res.Notice != "" {
				fmt.Fprintf(&b, "(%s)\n", res.Notice)
			}
			if len(res.Hits) == 0 {
				b.WriteString("no memory matches " + quote(arg))
			}
			best := 0.0
			for _, h := range res.Hits {
				best = max(best, h.BM25Score)
			}
			for i, h := range res.Hits {
				below := ""
				if m := memory.MatchScore(h, best, res.Mode != memory.ModeBM25); e.cfg.RecallThreshold > 0 && m < e.cfg.RecallThreshold {
					below = fmt.Sprintf("  (match %.2f below recall's threshold %.2f: recall drops it)", m, e.cfg.RecallThreshold)
				}
				fmt.Fprintf(&b, "%d. %s  [%s]  why: %s%s\n", i+1, h.Record.ID, h.Record.Area, h.Why(), below)
				fmt.Fprintf(&b, "   %s\n", clip(oneLine(h.Record.Text), 200))
			}
			return Output{Title: fmt.Sprintf("memory search %s (%s)", quote(arg), res.Mode), Text: strings.TrimRight(b.String(), "\n")}, nil
		})
		if err != nil {
			return e.memoryTool(ctx, err, "memory search "+quote(arg), "memory_load", map[string]any{"query": arg, "limit": protocol.RecallPool, "threshold": 0.1})
		}
		return out, nil
	case "add":
		if arg == "" {
			return Output{}, errors.New("/memory add needs the text to save")
		}
		out, err := e.withMemory(ctx, true, func(s service.Remote) (Output, error) {
			r, err := s.Put(ctx, memory.Input{Text: arg}, e.memorySource())
			if err != nil {
				return Output{}, err
			}
			return Output{Text: fmt.Sprintf("saved memory %s in area %s", r.ID, r.Area)}, nil
		})
		if err != nil {
			key := "operator_note_" + time.Now().UTC().Format("20060102_150405")
			return e.memoryTool(ctx, err, "memory add", "memory_save", map[string]any{"key": key, "value": arg, "tags": []string{"operator"}})
		}
		return out, nil
	case "forget":
		if arg == "" {
			return Output{}, errors.New("/memory forget needs a query: the memories similar to it are deleted")
		}
		out, err := e.withMemory(ctx, true, func(s service.Remote) (Output, error) {
			msg, err := s.MemoryForget(ctx, arg, memory.DefaultForgetThreshold, "", e.memorySource())
			if err != nil {
				return Output{}, err
			}
			return Output{Text: msg}, nil
		})
		if err != nil {
			return e.memoryTool(ctx, err, "memory forget "+quote(arg), "memory_forget", map[string]any{"query": arg})
		}
		return out, nil
	}
	return Output{}, fmt.Errorf("/memory %s: use stats, search QUERY, add TEXT or forget QUERY", sub)
}

// journalSummary is the size of the memory journal, read without its lock.
func (e *Engine) journalSummary() string {
	path := filepath.Join(e.cfg.MemoryDir, memory.JournalFile)
	fi, err := os.Stat(path)
	if err != nil {
		return "no journal yet"
	}
	events := 0
	if b, err := os.ReadFile(path); err == nil {
		events = strings.Count(string(b), "\n")
	}
	return fmt.Sprintf("journal   %s, %d events", bytesize(fi.Size()), events)
}

func formatMemoryStats(st memory.Stats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "records   %d", st.Records)
	if len(st.ByStatus) > 0 {
		fmt.Fprintf(&b, " (%s)", counts(st.ByStatus))
	}
	fmt.Fprintf(&b, "\nareas     %s\n", counts(st.ByArea))
	fmt.Fprintf(&b, "journal   %s, %d events\n", bytesize(st.JournalBytes), st.JournalSeq)
	fmt.Fprintf(&b, "full text %d documents\n", st.FulltextDocs)
	fmt.Fprintf(&b, "vectors   %s", st.Vectors)
	if st.VectorModel != "" {
		fmt.Fprintf(&b, " (%s, %d vectors)", st.VectorModel, st.VectorCount)
	}
	fmt.Fprintf(&b, "\nstore     %s", st.Dir)
	for _, n := range st.Notices {
		fmt.Fprintf(&b, "\nnotice    %s", n)
	}
	return b.String()
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// MemorySummary is the welcome card's line about the memory: its records and
// journal as the store holds them, and the model its vectors were built
// with. Only where the store has no vectors yet does it name the configured
// embedder, saying so.
func (e *Engine) MemorySummary(ctx context.Context) string {
	f, err := e.memoryFacts(ctx)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	configured := func() string {
		home := filepath.Dir(e.cfg.MemoryDir)
		return embed.DescribeSpec(embed.ConfiguredSpec(e.cfg.Embedder), home)
	}
	if !f.Exists {
		return "empty (nothing saved yet) · embedder " + configured() + " (configured)"
	}
	vectors := "vectors " + f.VectorModel
	switch {
	case f.Embedder != "":
		// The owner says which embedder the store runs with.
		vectors = "embedder " + f.Embedder
		if f.Vectors != "" && f.Vectors != "on" {
			vectors += " · vectors " + f.Vectors
		}
	case f.VectorModel == "":
		vectors = "no vectors on disk yet · embedder " + configured() + " (configured)"
	}
	return fmt.Sprintf("%d records · %s journal · %s", f.Records, bytesize(f.JournalBytes), vectors)
}

func (e *Engine) cmdPlugins(ctx context.Context, in slash.Invocation) (Output, error) {
	h := e.Host()
	if h == nil {
		return Output{}, errors.New("the plugins are still starting")
	}
	switch in.Arg(0) {
	case "", "list":
		return Output{Title: "plugins", Text: formatPluginList(h.Status(), len(h.FailedPlugins())), Table: true}, nil
	case "status":
		return Output{Title: "plugin status", Text: formatPluginStatus(h.Status(), in.Arg(1))}, nil
	case "reload":
		name := in.Arg(1)
		if name == "" {
			return Output{}, errors.New("/plugins reload needs a plugin name (/plugins list shows them)")
		}
		// The host vets the new version (start, wiring, state types, lint) and
		// stages it; the loop swaps it in at the top of its next iteration.
		if err := h.Reload(ctx, name); err != nil {
			return Output{}, err
		}
		if !e.Busy() {
			h.ApplyPending()
		}
		// Applied here, or already by the engine when the host said it was
		// staged (hotreload.go).
		if !slices.Contains(h.Pending(), name) {
			return Output{Text: "reloaded plugin " + name + " (the new version passed the checks and is in use)"}, nil
		}
		return Output{Text: "reloaded plugin " + name + ": the new version passed the checks and is swapped in at the agent's next step"}, nil
	}
	return Output{}, fmt.Errorf("/plugins %s: use list, status [NAME] or reload NAME", in.Arg(0))
}

func (e *Engine) cmdTools() (Output, error) {
	h := e.Host()
	if h == nil {
		return Output{}, errors.New("the plugins are still starting")
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, t := range h.Tools() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Spec.GetName(), t.ProviderName(), oneLine(t.Spec.GetDescription()))
	}
	tw.Flush()
	if b.Len() == 0 {
		return Output{Title: "tools", Text: "no tools are loaded"}, nil
	}
	return Output{Title: "tools", Text: strings.TrimRight(b.String(), "\n"), Table: true}, nil
}

func (e *Engine) cmdContext(ctx context.Context, in slash.Invocation) (Output, error) {
	a := e.Agent()
	if a == nil {
		return Output{}, ErrNotReady
	}
	// The context window's summary (budget, compression, summary:
	// loop.ContextReport) is what the operator reads; the ACP context object
	// the last hook received is long (a hundred lines and more), so it comes
	// after the summary and only when asked for, and the summary is not
	// scrolled away.
	window := strings.TrimRight(a.Context().String(), "\n")
	c := a.LastContext()
	switch in.Arg(0) {
	case "":
		if c == nil {
			return Output{Title: "context", Text: window}, nil
		}
		return Output{Title: "context", Text: window + "\n(/context json adds the context object the last hook call received: " + c.GetHook() + ")"}, nil
	case "compress":
		return e.compressNow(ctx, strings.TrimSpace(strings.Join(in.Args[1:], " ")))
	case "json":
		if c == nil {
			return Output{Title: "context", Text: window + "\nno hook has been called yet: send a prompt first"}, nil
		}
		b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(c)
		if err != nil {
			return Output{}, err
		}
		return Output{Title: "context window, and the context of the last hook call (" + c.GetHook() + ")", Text: window + "\n" + string(b)}, nil
	}
	return Output{}, fmt.Errorf("/context %s: use /context, or /context json for the context object too", in.Arg(0))
}

func (e *Engine) cmdApproval(in slash.Invocation) (Output, error) {
	if in.Arg(0) == "" {
		return Output{Title: "approval", Text: describeMode(e.Mode())}, nil
	}
	m, err := loop.ParseApprovalMode(in.Arg(0))
	if err != nil {
		return Output{}, err
	}
	e.SetMode(m)
	return Output{Text: describeMode(m)}, nil
}

func describeMode(m loop.ApprovalMode) string {
	switch m {
	case loop.ApprovalAutoEdit:
		return "approval mode auto-edit: file edits run without asking; other held calls and !commands ask"
	case loop.ApprovalYolo:
		return "approval mode yolo: every held call and !command runs without asking"
	}
	return "approval mode default: every held call and !command asks (allow once, for the session, or deny)"
}

// Thoughts returns the session's reflections, oldest first.
func (e *Engine) Thoughts() []transcript.Thought {
	_, th := transcript.Build(e.History())
	return th
}

func (e *Engine) cmdThoughts() (Output, error) {
	th := e.Thoughts()
	if len(th) == 0 {
		return Output{Title: "thoughts", Text: "no thoughts yet: send an empty prompt (Enter on an empty line) and the agent reflects on its state"}, nil
	}
	var b strings.Builder
	for i, t := range th {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "%s\n%s", t.Time.Local().Format("2006-01-02 15:04"), strings.TrimSpace(t.Text))
	}
	return Output{Title: fmt.Sprintf("thoughts (%d)", len(th)), Text: b.String()}, nil
}

func (e *Engine) cmdSessions() (Output, error) {
	list, err := e.Sessions()
	if err != nil {
		return Output{}, err
	}
	if len(list) == 0 {
		return Output{Title: "sessions", Text: "no saved sessions"}, nil
	}
	cur := ""
	if s := e.Session(); s != nil {
		cur = s.Name()
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, s := range list {
		mark := " "
		if s.Name == cur {
			mark = "•"
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\n", mark, s.Name, s.Modified.Local().Format("2006-01-02 15:04"), bytesize(s.Size))
	}
	tw.Flush()
	// The footer says where they are: a directory, or the shared bucket of
	// the memory journal's stream (sessions begun through other hosts).
	fmt.Fprintf(&b, "(in %s)", e.store().Location())
	return Output{Title: "sessions (• this one; /resume NAME)", Text: b.String(), Table: true}, nil
}

func (e *Engine) cmdExport(in slash.Invocation) (Output, error) {
	format, file := in.Arg(0), in.RestAfter(1)
	if (format != "md" && format != "json") || file == "" {
		return Output{}, errors.New("/export needs a format and a file: /export md FILE or /export json FILE")
	}
	s := e.Session()
	if s == nil {
		return Output{}, errors.New("no session is open")
	}
	msgs := e.History()
	if len(msgs) == 0 {
		return Output{}, fmt.Errorf("session %s has no messages yet", s.Name())
	}
	path := e.resolve(file)
	if exists(path) {
		return Output{}, fmt.Errorf("%s exists; choose another file name (nothing was overwritten)", file)
	}
	f, err := renameio.NewPendingFile(path, renameio.WithPermissions(0o644))
	if err != nil {
		return Output{}, fmt.Errorf("writing %s: %w", file, err)
	}
	defer f.Cleanup()
	if format == "md" {
		_, err = io.WriteString(f, transcript.Markdown(s.Name(), msgs, time.Now()))
	} else {
		err = transcript.WriteJSON(f, s.Name(), s.ID(), msgs, time.Now())
	}
	if err == nil {
		err = f.CloseAtomicallyReplace()
	}
	if err != nil {
		return Output{}, fmt.Errorf("writing %s: %w", file, err)
	}
	return Output{Text: fmt.Sprintf("wrote %s (%d messages, %s)", file, len(msgs), format)}, nil
}

// cmdImport opens a new session holding the messages of an export. The
// session is named after the export; a name in use gets a suffix.
func (e *Engine) cmdImport(ctx context.Context, in slash.Invocation) (Output, error) {
	file := in.Rest
	if file == "" {
		return Output{}, errors.New("/import needs a file written by /export json")
	}
	if e.Busy() {
		return Output{}, ErrBusy
	}
	f, err := os.Open(e.resolve(file))
	if err != nil {
		return Output{}, err
	}
	ex, msgs, err := transcript.ReadJSON(f, file)
	f.Close()
	if err != nil {
		return Output{}, err
	}
	name := ex.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	name = e.freeName(sanitizeName(name))
	// Write the new session's file first, then open it: the agent starts from
	// the imported history.
	s, err := e.store().Open(ctx, name)
	if err != nil {
		return Output{}, err
	}
	for i, m := range msgs {
		if err := s.Append(ctx, m); err != nil {
			s.Close()
			return Output{}, fmt.Errorf("importing message %d of %s: %w", i+1, file, err)
		}
	}
	if err := s.Close(); err != nil {
		return Output{}, err
	}
	if _, err := e.OpenSession(ctx, name); err != nil {
		return Output{}, err
	}
	return Output{Text: fmt.Sprintf("imported %d messages from %s into session %s", len(msgs), file, name), Switched: true}, nil
}

// freeName returns name, or name with a suffix when a session has it.
func (e *Engine) freeName(name string) string {
	if !e.SessionExists(name) {
		return name
	}
	for i := 2; ; i++ {
		n := fmt.Sprintf("%s-%d", name, i)
		if len(n) > 64 {
			n = fmt.Sprintf("%s-%d", name[:min(len(name), 56)], i)
		}
		if !e.SessionExists(n) {
			return n
		}
	}
}

// sanitizeName makes a valid session name out of s.
func sanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	n := strings.TrimLeft(b.String(), "._-")
	if n == "" {
		n = "imported"
	}
	if len(n) > 56 {
		n = n[:56]
	}
	return n
}

// FormatWiring renders hook events as /wiring shows them: one line per call
// (step, hook, order, extension and plugin, time), and under it the state
// keys it read and wrote, and its error.
func FormatWiring(evs []loop.Event) string {
	if len(evs) == 0 {
		return "no hook has fired yet: send a prompt first"
	}
	type row struct{ hook, order, who, time, notes string }
	rows := make([]row, len(evs))
	hw, ow, ww := len("hook"), len("order"), len("extension (plugin)")
	var total time.Duration
	for i, e := range evs {
		d := time.Duration(e.DurationUS) * time.Microsecond
		total += d
		r := row{hook: e.Hook, who: e.Extension + " (" + e.Plugin + ")", time: duration(d)}
		if e.Order != nil {
			r.order = fmt.Sprint(*e.Order)
		}
		if e.Agent != "" {
			r.who = e.Agent + ": " + r.who
		}
		var notes []string
		if len(e.Reads) > 0 {
			notes = append(notes, "read "+strings.Join(e.Reads, ", "))
		}
		if len(e.Writes) > 0 {
			notes = append(notes, "wrote "+strings.Join(e.Writes, ", "))
		}
		if e.Error != "" {
			notes = append(notes, "FAILED: "+clip(oneLine(e.Error), 160))
		}
		r.notes = strings.Join(notes, "; ")
		hw, ow, ww = max(hw, len(r.hook)), max(ow, len(r.order)), max(ww, len(r.who))
		rows[i] = r
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%4s %4s  %-*s  %*s  %-*s  %s\n", "#", "step", hw, "hook", ow, "order", ww, "extension (plugin)", "time")
	for i, r := range rows {
		fmt.Fprintf(&b, "%4d %4d  %-*s  %*s  %-*s  %s\n", i+1, evs[i].Iteration, hw, r.hook, ow, r.order, ww, r.who, r.time)
		if r.notes != "" {
			fmt.Fprintf(&b, "%11s%s\n", "", r.notes)
		}
	}
	fmt.Fprintf(&b, "%d hook calls, %s in extensions", len(evs), duration(total))
	return b.String()
}

// FormatStats renders Stats as /stats shows them.
func FormatStats(s Stats, numCtx int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "turns        %d\n", s.Turns)
	fmt.Fprintf(&b, "model calls  %d, %s in total", s.ModelCalls, duration(s.ModelTime))
	if s.ModelCalls > 0 {
		fmt.Fprintf(&b, " (%s per call)", duration(s.ModelTime/time.Duration(s.ModelCalls)))
	}
	if s.FirstTokenCalls > 0 {
		fmt.Fprintf(&b, ", first token after %s on average", duration(s.FirstToken/time.Duration(s.FirstTokenCalls)))
	}
	fmt.Fprintf(&b, "\ntokens       %d prompt, %d output\n", s.PromptTokens, s.OutputTokens)
	fmt.Fprintf(&b, "last call    %.1f tokens/s, context %d of %d tokens (%.0f%%)\n", s.LastTokensPerSec, s.LastPromptTokens, numCtx, s.LastContextFill*100)
	fmt.Fprintf(&b, "tools        %d calls, %s\n", s.ToolCalls, duration(s.ToolTime))
	fmt.Fprintf(&b, "hooks        %d calls, %s, %d failed", s.HookCalls, duration(s.HookTime), s.HookErrors)
	for i, h := range s.Hooks {
		if i == 5 {
			fmt.Fprintf(&b, "\n  … %d more", len(s.Hooks)-5)
			break
		}
		fmt.Fprintf(&b, "\n  %-28s %-24s %5d calls  %s", h.Hook, h.Extension, h.Calls, duration(h.Time))
		if h.Errors > 0 {
			fmt.Fprintf(&b, "  %d failed", h.Errors)
		}
	}
	return b.String()
}

type hostStatus = host.PluginStatus

func formatPluginList(sts []hostStatus, failed int) string {
	if len(sts) == 0 {
		return "no plugins"
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "plugin\tstate\tsource\tversion\textensions\ttools")
	for _, s := range sts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", s.Name, s.State, s.Source, s.Version, len(s.Extensions), strings.Join(s.Tools, ", "))
	}
	tw.Flush()
	if failed > 0 {
		fmt.Fprintf(&b, "%d failed to start: /plugins status NAME says why", failed)
	}
	return strings.TrimRight(b.String(), "\n")
}

func formatPluginStatus(sts []hostStatus, name string) string {
	var b strings.Builder
	found := false
	for _, s := range sts {
		if name != "" && s.Name != name {
			continue
		}
		found = true
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "%s  %s  (%s, %s)\n", s.Name, s.State, s.Source, s.Path)
		if s.Version != "" {
			fmt.Fprintf(&b, "  version   %s\n", s.Version)
		}
		fmt.Fprintf(&b, "  crashes   %d, restarts %d\n", s.Crashes, s.Restarts)
		for _, x := range s.Extensions {
			off := ""
			if x.Disabled {
				off = "  (disabled)"
			}
			fmt.Fprintf(&b, "  %-26s at %-28s order %d%s\n", x.Name, x.Hook, x.Order, off)
		}
		if len(s.Tools) > 0 {
			fmt.Fprintf(&b, "  tools     %s\n", strings.Join(s.Tools, ", "))
		}
		for _, sh := range s.Shadows {
			fmt.Fprintf(&b, "  shadow    %s %q of %s is hidden by %s\n", sh.Kind, sh.Name, sh.Hidden, sh.By)
		}
		if s.Reloads > 0 || s.Pending != "" {
			fmt.Fprintf(&b, "  reloads   %d", s.Reloads)
			if s.Pending != "" {
				fmt.Fprintf(&b, ", pending: %s", s.Pending)
			}
			b.WriteString("\n")
		}
		if s.LastRejection != "" {
			fmt.Fprintf(&b, "  rejected  %s\n", s.LastRejection)
		}
		if s.LastError != "" {
			fmt.Fprintf(&b, "  error     %s\n", s.LastError)
		}
		if t := strings.TrimSpace(s.Stderr); t != "" {
			fmt.Fprintf(&b, "  stderr    %s\n", strings.ReplaceAll(t, "\n", "\n            "))
		}
	}
	if !found {
		return "no plugin called " + name + " (/plugins list shows them)"
	}
	return strings.TrimRight(b.String(), "\n")
}

func duration(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%dµs", d.Microseconds())
}

func list(xs []string) string {
	if len(xs) == 0 {
		return "-"
	}
	return strings.Join(xs, ",")
}

func bytesize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func quote(s string) string { return "“" + s + "”" }
