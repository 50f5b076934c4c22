package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/extensions/cmdhooks"
)

func newHooksTestCmd() *cobra.Command {
	var input string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "test EVENT --input FILE",
		Short: "Run the command hooks of an event on a payload and show the decision",
		Long: `test runs every command hook registered for EVENT (a Claude Code or Codex name
such as PreToolUse, or a Gemini CLI one such as BeforeTool) whose matcher
selects the payload's tool_name (in any tool's terms: Bash, run_shell_command,
Read, read_file, ...; each hook gets its own tool's name) on the payload in
FILE ("-": stdin). The hooks that match run at once (a session runs them one
after another, each seeing the input the earlier ones left), and
their results combine in their order (a block wins, contexts join in order,
input changes apply in order). It shows each hook's result and the combined
decision, and exits 1 when a hook could not run or answer.`,
		Example: `  echo '{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}' > p.json
  exocortex hooks test PreToolUse --input p.json
  exocortex hooks test BeforeTool --input - --json < p.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if input == "" {
				return fmt.Errorf("hooks test needs --input FILE, the JSON payload (\"-\" for stdin)")
			}
			event, ok := cmdhooks.EventOf(args[0])
			if !ok {
				return fmt.Errorf("%q is not an event the command hooks run at (PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SubagentStop, SessionStart, SessionEnd, or Gemini CLI's BeforeTool, AfterTool, BeforeAgent, AfterAgent)", args[0])
			}
			payload, err := readPayload(cmd.InOrStdin(), input)
			if err != nil {
				return err
			}
			b, err := loadHooks()
			if err != nil {
				return err
			}
			rows, combined := runHookTest(cmd.Context(), b, event, payload)
			failed := false
			for _, r := range rows {
				failed = failed || r.Failure != ""
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					Event    string          `json:"event"`
					Hooks    []hookTestRow   `json:"hooks"`
					Decision *decisionReport `json:"decision"`
				}{event, rows, combined}); err != nil {
					return err
				}
			} else {
				printHookTest(out, event, rows, combined)
			}
			if failed {
				return &exitError{code: 1, err: fmt.Errorf("a command hook of %s could not run or answer", event)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&input, "input", "", "the JSON payload file (\"-\": stdin)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "write JSON")
	return cmd
}

func readPayload(stdin io.Reader, file string) (map[string]any, error) {
	var raw []byte
	var err error
	if file == "-" {
		raw, err = io.ReadAll(stdin)
	} else {
		raw, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the payload %s: %w", file, err)
	}
	p := map[string]any{}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("the payload %s is not a JSON object (%w): write the fields the hook reads, e.g. {\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"}}", file, err)
	}
	return p, nil
}

// runHookTest runs the hooks of event that select payload, all at once, and
// combines their decisions in their order.
func runHookTest(ctx context.Context, b *cmdhooks.Bridge, event string, payload map[string]any) ([]hookTestRow, *decisionReport) {
	var hooks []cmdhooks.Hook
	for _, h := range b.Hooks {
		if h.Event == event || (event == cmdhooks.PostToolUse && h.Event == cmdhooks.PostToolUseFailure && payload["error"] != nil) {
			hooks = append(hooks, h)
		}
	}
	rows := make([]hookTestRow, len(hooks))
	decisions := make([]cmdhooks.Decision, len(hooks))
	var wg sync.WaitGroup
	for i, h := range hooks {
		fields := map[string]any{}
		for k, v := range payload {
			fields[k] = v
		}
		rows[i] = hookTestRow{Extension: h.Ext(), Command: h.Command}
		if name, ok := payload["tool_name"].(string); ok {
			name = cmdhooks.NameFor(h.Dialect, name)
			fields["tool_name"] = name
			if !h.Matches(name) {
				rows[i].Skipped = fmt.Sprintf("matcher %q does not select %s", h.Matcher, name)
				continue
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			e := cmdhooks.Env{SessionID: str(payload["session_id"], "hooks-test"), Project: b.Project, Approval: b.Approval}
			e.TranscriptPath = str(payload["transcript_path"], "")
			d, err := b.Test(ctx, h, e, fields)
			rows[i].TookMS = time.Since(start).Milliseconds()
			if err != nil {
				rows[i].Failure = err.Error()
				var f *cmdhooks.Failure
				if errors.As(err, &f) {
					rows[i].Kind = string(f.Kind)
				}
				// As in a session: a blocking event fails closed.
				if h.Blocking() && !h.FailOpen {
					d = cmdhooks.Decision{Block: true, Reason: "fails closed: " + err.Error()}
				}
			}
			decisions[i] = d
			rows[i].Decision = decisionOf(d)
		}()
	}
	wg.Wait()
	return rows, decisionOf(cmdhooks.Combine(decisions))
}

func str(v any, def string) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}

func printHookTest(out io.Writer, event string, rows []hookTestRow, d *decisionReport) {
	if len(rows) == 0 {
		fmt.Fprintf(out, "no command hooks at %s (exocortex hooks list)\n", event)
	}
	for _, r := range rows {
		switch {
		case r.Skipped != "":
			fmt.Fprintf(out, "%s: skipped: %s\n", r.Extension, r.Skipped)
		case r.Failure != "":
			fmt.Fprintf(out, "%s: FAILED (%s) after %d ms: %s\n", r.Extension, r.Kind, r.TookMS, r.Failure)
		default:
			fmt.Fprintf(out, "%s: %s (%d ms)\n", r.Extension, describeDecision(r.Decision), r.TookMS)
		}
	}
	fmt.Fprintf(out, "decision at %s: %s\n", event, describeDecision(d))
}

func describeDecision(d *decisionReport) string {
	var s string
	switch {
	case d.Block:
		s = "block: " + d.Reason
	case d.Ask:
		s = "ask the operator: " + d.Reason
	case d.Allow:
		s = "allow"
	default:
		s = "go ahead"
	}
	if d.Input != nil {
		b, _ := json.Marshal(d.Input)
		s += "; input becomes " + string(b)
	}
	if d.Context != "" {
		s += "; context: " + d.Context
	}
	if d.Output != nil {
		s += "; output becomes: " + *d.Output
	}
	if d.Halt {
		s += "; stops the agent"
	}
	for _, w := range d.Warnings {
		s += "; warning: " + w
	}
	return s
}
