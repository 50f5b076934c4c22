package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/extensions/builtin"
	"github.com/exocortex/exocortex/extensions/mcpclient"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sandbox"
	"github.com/exocortex/exocortex/tui"
)

// sessionFlags are the root command's: the agent's flags and how to pick the
// session and the screen.
type sessionFlags struct {
	agent      agentFlags
	cont       bool
	resume     string
	fullscreen bool
	plain      bool
}

// setSessionCmd makes the root command open an operator session.
func setSessionCmd(root *cobra.Command) {
	f := &sessionFlags{}
	root.Args = cobra.NoArgs
	root.Long = `Exocortex runs an agent loop against a local model (Ollama) and fires its hooks
into out-of-process plugins. Without a subcommand it opens an operator session
in the terminal: a welcome card (model, Ollama address and whether it answered,
plugins and their health, memory size), then a prompt.

The session draws inline, so the terminal's scrollback keeps the conversation
(--fullscreen uses the whole screen instead). Every message is saved as it is
added, under a session name: -c continues the last session, --resume NAME a
named one. /help lists the commands and keys. When stdin or stdout is not a
terminal (or with --plain) it reads prompts line by line instead; for scripts,
use exocortex run -p.`
	root.Example = `  exocortex                       # a new session
  exocortex -c                    # continue the last session
  exocortex --resume 2026-11-21-1530-ab12
  exocortex --model script:examples/scripts/hello.yaml
  echo "hello" | exocortex --plain`
	root.RunE = func(cmd *cobra.Command, _ []string) error { return runSession(cmd, f) }
	fl := root.Flags()
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the last session")
	fl.StringVar(&f.resume, "resume", "", "continue the session called `NAME` (it must exist)")
	fl.BoolVar(&f.fullscreen, "fullscreen", false, "draw on the whole screen (the alternate screen) instead of inline")
	fl.BoolVar(&f.plain, "plain", false, "read prompts line by line even on a terminal")
	f.agent.register(root)
}

// errNothingToContinue is pickSession's answer to -c when there is no
// earlier session: it still returns a new session's name, to start afresh.
var errNothingToContinue = errors.New("nothing to continue")

// pickSession returns the session to open and whether it existed before.
// With -c and no earlier session it returns a new name and
// errNothingToContinue.
func (f *sessionFlags) pickSession(dir string, now time.Time) (string, bool, error) {
	return f.pickSessionIn(context.Background(), session.NewDirStore(dir), now)
}

// pickSessionIn is pickSession over the session store st.
func (f *sessionFlags) pickSessionIn(ctx context.Context, st session.Store, now time.Time) (string, bool, error) {
	dir := st.Location()
	exists := func(name string) bool {
		ok, _ := st.Exists(ctx, name)
		return ok
	}
	set := 0
	for _, b := range []bool{f.cont, f.resume != "", f.agent.sessionName != ""} {
		if b {
			set++
		}
	}
	if set > 1 {
		return "", false, &exitError{2, errors.New("choose one of -c, --resume NAME and --session NAME")}
	}
	switch {
	case f.resume != "":
		if err := session.ValidateName(f.resume); err != nil {
			return "", false, &exitError{2, err}
		}
		if !exists(f.resume) {
			return "", false, &exitError{2, fmt.Errorf("no session called %s in %s; `exocortex -c` continues the last one, and /sessions lists them all", f.resume, dir)}
		}
		return f.resume, true, nil
	case f.cont:
		last, err := st.Last(ctx)
		if err != nil {
			return "", false, err
		}
		if last != "" && exists(last) {
			return last, true, nil
		}
		// Nothing to continue: a new session, as gemini-cli does for
		// --resume with no sessions, and said on stderr (runSession).
		return session.NewName(now), false, errNothingToContinue
	case f.agent.sessionName != "":
		if err := session.ValidateName(f.agent.sessionName); err != nil {
			return "", false, &exitError{2, err}
		}
		return f.agent.sessionName, exists(f.agent.sessionName), nil
	}
	return session.NewName(now), false, nil
}

// runSession is the root command: the terminal session, or line mode.
func runSession(cmd *cobra.Command, f *sessionFlags) error {
	a, err := loadApp()
	if err != nil {
		return err
	}
	defer a.close()
	if err := f.agent.apply(a); err != nil {
		return &exitError{2, err}
	}
	mode, err := loop.ParseApprovalMode(a.cfg.Approval)
	if err != nil {
		return &exitError{2, err}
	}
	sessions := filepath.Join(a.home, "sessions")
	sessStore, closeStore, err := sessionStore(cmd.Context(), a.home, journalSetting(a.cfg), a.log)
	if err != nil {
		return err
	}
	defer closeStore()
	name, resumed, err := f.pickSessionIn(cmd.Context(), sessStore, time.Now())
	if errors.Is(err, errNothingToContinue) {
		fmt.Fprintf(cmd.ErrOrStderr(), "exocortex: -c: there is no earlier session in %s to continue; starting a new session, %s\n", sessions, name)
		err = nil
	}
	if err != nil {
		return err
	}
	client, model, stopModel, err := a.model()
	if err != nil {
		return err
	}
	defer stopModel()
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	dirs := a.promptDirs(wd)
	loader := prompts.NewLoader(dirs...)
	numCtx := a.cfg.NumCtx
	if numCtx == 0 {
		// The window the agent will use: the model's own, capped (as loop
		// resolves it), for the status line.
		maxCtx := a.cfg.MaxNumCtx
		if maxCtx <= 0 {
			maxCtx = llm.DefaultNumCtx
		}
		numCtx = min(llm.DefaultNumCtx, maxCtx)
		lctx, cancel := context.WithTimeout(cmd.Context(), 3*time.Second)
		if n, err := client.ContextLength(lctx, model); err == nil && n > 0 {
			numCtx = min(n, maxCtx)
		}
		cancel()
	}
	scripted := ""
	if strings.HasPrefix(a.cfg.Model, "script:") {
		scripted = a.cfg.Model
	}
	idle := newIdleSleeper(a.home, time.Duration(a.cfg.IdleSleep), a.log, a.logFile)
	// !commands run under the local shell (when no plugin provides the shell
	// tool) in the tools' sandbox.
	tools, err := a.tools()
	if err != nil {
		return err
	}
	// The secrets are read before the terminal opens: one that cannot be
	// read or masked stops the start, and what the operator types is masked
	// before the input history, the transcript or the agent see it.
	store, err := a.loadSecrets()
	if err != nil {
		return err
	}
	started := time.Now().UTC()
	eng := tui.NewEngine(tui.Config{
		Mask:  store.Masker().Mask,
		Model: model, Address: client.BaseURL(), Provider: client.Name(), Scripted: scripted, LLM: client, NumCtx: numCtx,
		StartHost: a.openLiveHost,
		NewAgent:  a.sessionAgent(client, loader, idle),
		Prompts:   loader, SessionsDir: sessions, Sessions: sessStore, Session: name, Resumed: resumed,
		HistoryFile: filepath.Join(a.home, "history.jsonl"),
		MemoryDir:   filepath.Join(a.home, "memory"),
		Embedder:    tools.Memory.Embedder, RecallThreshold: tools.Memory.Recall.Threshold,
		WorkDir: wd, ApprovalMode: mode, Fullscreen: f.fullscreen,
		Confine:      &tools.CodeExecution.Confine,
		SandboxProbe: func() sandbox.Status { return sandbox.Probe("") },
		// The MCP servers the mcp-servers plugin started for this session:
		// its status file, rewritten whenever a server's state changes.
		Problems: func() []string { return mcpclient.Problems(filepath.Join(a.home, builtin.MCPStatusFile), started) },
	})

	// Ctrl+C belongs to the session (it stops a turn), so the root's SIGINT
	// context is not used; SIGTERM and SIGHUP end the session cleanly.
	ctx, stop := signal.NotifyContext(context.WithoutCancel(cmd.Context()), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	go idle.run(ctx, 30*time.Second)
	if f.plain || !isTerminal(os.Stdin) || !isTerminal(os.Stdout) {
		a.setNotify(func(msg string) { fmt.Fprintln(cmd.ErrOrStderr(), "notice:", msg) })
		return tui.LineMode(ctx, eng, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	a.mu.Lock()
	a.retried = eng.Retried
	a.mu.Unlock()
	// Libraries that log through the standard logger (go-plugin's broker, for
	// one) would write over the screen: their lines go to the log file.
	log.SetOutput(a.logFile)
	defer log.SetOutput(os.Stderr)
	// In raw mode Ctrl+C is a key; a SIGINT can only come from kill, and
	// ends the session like SIGTERM.
	ctx, stopInt := signal.NotifyContext(ctx, os.Interrupt)
	defer stopInt()
	return tui.Run(ctx, eng)
}

// sessionAgent builds a session's agent as `run` does (app.start), with the
// model, session, observer and approver the terminal gives.
func (a *app) sessionAgent(client llm.Provider, loader *prompts.Loader, idle *idleSleeper) func(tui.AgentSpec) (*loop.Agent, error) {
	return func(s tui.AgentSpec) (*loop.Agent, error) {
		opts := a.agentOptions(s.Host, client, loader, s.Model)
		opts.Session, opts.ApprovalMode, opts.Approver, opts.Observer = s.Session, s.Mode, s.Approver, idle.observe(s.Observer)
		if err := a.record(&opts); err != nil {
			return nil, err
		}
		agent, err := loop.New(opts)
		if err != nil {
			return nil, err
		}
		s.Host.Services().SetSubordinateRunner(agent.RunSubordinate)
		s.Host.Services().SetEmbeddingSink(agent.ReportEmbeddingChange)
		s.Host.Services().SetUtilityRunner(agent.CallUtility)
		return agent, nil
	}
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
