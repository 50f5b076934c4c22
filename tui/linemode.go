package tui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/tui/slash"
)

// answerSeparator is the line between two answers on LineMode's output.
const answerSeparator = "\n---"

// LineMode runs the session over plain lines, for when stdin or stdout is
// not a terminal: each line read from in is a prompt (a line ending in "\"
// continues on the next), "/command" and "!command" work as in the terminal
// session, blank lines are skipped. Answers go to out; the welcome, the
// agent's steps and problems go to errOut, so `exocortex < prompts.txt >
// answers.txt` keeps the answers apart (a "---" line between two). The
// plugins' problems (an MCP server that failed to start, crashed or hangs)
// are "!" lines on errOut, each once: those found at start after the
// plugins line, each later one when it is found. Nobody can be asked for an
// approval here: held calls are denied unless --approval yolo. An interrupt (SIGINT)
// stops the running turn; a second one, or one while idle, leaves.
func LineMode(ctx context.Context, eng *Engine, in io.Reader, out, errOut io.Writer) error {
	defer eng.Close()
	reg := Commands()
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(errOut, format+"\n", args...)
		mu.Unlock()
	}
	fold := NewReasoningFold(nil)
	eng.SetFrontend(func(e loop.Event) { lineEvent(say, fold, e) }, nil)
	eng.setHostEvents(func(e host.Event) {
		if line, _, ok := reloadLine(e); ok {
			say("%s", line)
		}
	})

	cfg := eng.Config()
	if _, err := eng.OpenSession(ctx, cfg.Session); err != nil {
		return err
	}
	say("exocortex · session %s · model %s", cfg.Session, eng.Model())
	if info, err := eng.Probe(ctx); err != nil {
		say("%s %s: %s; %s", cfg.provider(), cfg.Address, probeProblem(err), probeFix(cfg.provider(), err, eng.Model()))
	} else {
		say("%s %s answered (%s)", cfg.provider(), cfg.Address, serverVersion(cfg.provider(), info.Version))
	}
	h, err := eng.StartHost(ctx)
	if err != nil && h == nil {
		say("plugins: %v", err)
	} else if h != nil {
		var names []string
		for _, p := range h.Status() {
			names = append(names, fmt.Sprintf("%s (%s)", p.Name, p.State))
		}
		say("plugins: %s", strings.Join(names, ", "))
		for _, b := range eng.Banners(ctx) {
			say("%s", bannerLine(b))
		}
		if err != nil {
			say("agent: %v", err)
		}
	}
	problems := &lineProblems{eng: eng, say: say, shown: map[string]bool{}}
	problems.report()
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); problems.watch(watchCtx) }()
	defer func() { stopWatch(); <-watched }()

	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)

	// Lines are read on their own goroutine, so an interrupt while waiting
	// for input ends the session at once.
	lines := make(chan string)
	scanErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64*1024), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		scanErr <- sc.Err()
		close(lines)
	}()
	var pending strings.Builder
	answers := 0
	for {
		var line string
		select {
		case <-ctx.Done():
			return nil
		case <-interrupts:
			return nil
		case l, ok := <-lines:
			if !ok {
				return <-scanErr
			}
			line = l
		}
		if strings.HasSuffix(line, "\\") {
			pending.WriteString(strings.TrimSuffix(line, "\\") + "\n")
			continue
		}
		pending.WriteString(line)
		text := pending.String()
		pending.Reset()
		trimmed := strings.TrimSpace(text)
		if trimmed == "" {
			continue
		}
		if slash.IsCommand(trimmed) {
			if quit := lineCommand(ctx, eng, reg, trimmed, out, say); quit {
				return nil
			}
			continue
		}
		tctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			select {
			case <-interrupts:
				say("stopping…")
				cancel()
			case <-done:
			}
		}()
		if cmd, ok := strings.CutPrefix(trimmed, "!"); ok {
			res, err := eng.RunShell(tctx, strings.TrimSpace(cmd))
			if res.Output != "" {
				fmt.Fprint(out, res.Output)
			}
			if err != nil {
				say("! %v", err)
			} else {
				say("! exit %d (%s)", res.ExitCode, res.Decision)
			}
		} else {
			res, err := eng.Run(tctx, text)
			switch {
			case err == nil && res != nil:
				// Answers are kept apart by a rule line of their own
				// (answers may hold blank lines of their own).
				if answers > 0 {
					fmt.Fprint(out, answerSeparator+"\n\n")
				}
				answers++
				fmt.Fprintln(out, strings.TrimSpace(res.Response))
			case errors.Is(err, context.Canceled):
				say("stopped")
			case err != nil:
				say("error: %s", errText(err))
			}
		}
		close(done)
		cancel()
	}
}

// lineCommand runs a slash command in line mode; it returns true for /quit.
func lineCommand(ctx context.Context, eng *Engine, reg *slash.Registry, line string, out io.Writer, say func(string, ...any)) bool {
	in, err := reg.Parse(line)
	if err != nil {
		say("%v", err)
		return false
	}
	switch in.Name {
	case "quit":
		return true
	case "help":
		fmt.Fprintln(out, reg.Help())
		return false
	case "clear", "expand":
		say("/%s needs the terminal session", in.Name)
		return false
	}
	o, err := eng.Exec(ctx, in)
	if err != nil {
		say("%v", err)
		return false
	}
	if o.Title != "" {
		fmt.Fprintln(out, o.Title)
	}
	fmt.Fprintln(out, o.Text)
	return false
}

// lineEvent reports the agent's steps on stderr, the model's reasoning
// folded to one line.
func lineEvent(say func(string, ...any), fold *ReasoningFold, e loop.Event) {
	who := ""
	if e.Agent != "" {
		who = e.Agent + ": "
	}
	if line, ok := fold.Observe(e); ok {
		say("%s%s", who, line)
	}
	switch e.Type {
	case loop.EventToolCall:
		if e.Tool != "response" {
			say("%s⚙ %s %s", who, e.Tool, clip(compactArgs(e.Args), 200))
		}
	case loop.EventToolResult:
		if e.Tool == "response" {
			return
		}
		if e.Error != "" {
			say("%s  ⎿ error: %s", who, clip(oneLine(e.Error), 200))
		} else {
			first, _, _ := strings.Cut(strings.TrimSpace(e.Result), "\n")
			say("%s  ⎿ %s", who, clip(first, 200))
		}
	case loop.EventSignal:
		first, _, _ := strings.Cut(strings.TrimSpace(e.Text), "\n")
		say("%s↺ %s: %s", who, e.Signal, clip(first, 200))
	case loop.EventApproval:
		say("%sapproval %s: %s", who, e.Result, clip(oneLine(e.Text), 200))
	case loop.EventNotice:
		say("%snotice: %s %s", who, e.Text, e.Error)
	case loop.EventHook:
		if e.Error != "" {
			say("%s! %s", who, hookFailure(e))
		}
	}
}
