package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/extensions/cmdhooks"
	"github.com/exocortex/exocortex/toolsettings"
)

func newHooksCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "The command hooks of Claude Code, Gemini CLI and Codex that Exocortex runs",
		Long: `Exocortex runs the hook scripts written for Claude Code, Gemini CLI and Codex
unchanged: the user's ~/.claude/settings.json, ~/.gemini/settings.json,
~/.codex/hooks.json and $EXOCORTEX_HOME/hooks.json always, and a trusted
project's .claude/settings.json, .claude/settings.local.json,
.gemini/settings.json, .codex/hooks.json and .exocortex/hooks.json
(exocortex trust). Each hook runs at the matching Exocortex hook (PreToolUse
at tool_execute_before, ...), and a hook that cannot run is reported, and stops
the tool call it guards unless its entry says "fail_open": true. See
docs/command-hooks.md.`,
	}
	cmd.AddCommand(newHooksListCmd(), newHooksTestCmd())
	return cmd
}

// loadHooks reads the command hooks as a session started here would.
func loadHooks() (*cmdhooks.Bridge, error) {
	home, err := config.Home()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(home)
	if err != nil {
		return nil, err
	}
	b := &cmdhooks.Bridge{Settings: cfg.CommandHooksSettings(home, cwd()), Project: cwd(), Home: home, Approval: cfg.Approval}
	b.Hooks, b.Problems = cmdhooks.Load(b.Settings.Files)
	return b, nil
}

// hookRow is one hook as hooks list shows it.
type hookRow struct {
	Extension   string `json:"extension"`
	Event       string `json:"event"`
	NativeEvent string `json:"native_event"`
	At          string `json:"exocortex_hook"`
	Order       int    `json:"order"`
	Matcher     string `json:"matcher,omitempty"`
	Command     string `json:"command"`
	TimeoutMS   int64  `json:"timeout_ms"`
	OnFailure   string `json:"on_failure"`
	Dialect     string `json:"dialect"`
	Scope       string `json:"scope"`
	File        string `json:"file"`
	Problem     string `json:"problem,omitempty"`
}

func hookRows(b *cmdhooks.Bridge) []hookRow {
	rows := make([]hookRow, 0, len(b.Hooks))
	for _, h := range b.Hooks {
		on := "reported"
		if h.Blocking() {
			on = "fails closed"
			if h.FailOpen {
				on = "fails open"
			}
		}
		at := h.At()
		if h.Event == cmdhooks.SessionEnd {
			at = "session end (plugin close)"
		}
		rows = append(rows, hookRow{Extension: h.Ext(), Event: h.Event, NativeEvent: h.NativeEvent, At: at, Order: cmdhooks.Order + h.Index,
			Matcher: h.Matcher, Command: h.Command, TimeoutMS: h.Timeout.Milliseconds(), OnFailure: on, Dialect: h.Dialect, Scope: h.Scope,
			File: h.File, Problem: cmdhooks.Check(h, b.Project)})
	}
	return rows
}

func newHooksListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the command hooks: where each comes from and at which hook it runs",
		Long: `list reads the hook configurations a session started in this directory reads,
and shows every command hook: its Exocortex extension name, its event and the
Exocortex hook it runs at, its order, matcher, command and timeout, what its
failure does, and the file it comes from. A script that does not exist or is
not executable, a file that is not JSON, an event Exocortex has no hook for and
a project file left out because the project is not trusted are shown too; the
command exits 1 when there is any such problem.`,
		Example: `  exocortex hooks list
  exocortex hooks list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := loadHooks()
			if err != nil {
				return err
			}
			rows := hookRows(b)
			problems := len(b.Problems) + len(b.Settings.Skipped)
			for _, r := range rows {
				if r.Problem != "" {
					problems++
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					Files    []toolsettings.HookFile `json:"files"`
					Skipped  []toolsettings.HookFile `json:"skipped_untrusted"`
					Hooks    []hookRow               `json:"hooks"`
					Problems []cmdhooks.Problem      `json:"problems"`
				}{b.Settings.Files, b.Settings.Skipped, rows, b.Problems}); err != nil {
					return err
				}
			} else {
				printHookRows(out, b, rows)
			}
			if problems > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d command-hook problem(s)", problems)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write JSON")
	return cmd
}

func printHookRows(out io.Writer, b *cmdhooks.Bridge, rows []hookRow) {
	if len(rows) == 0 {
		fmt.Fprintln(out, "no command hooks (read: "+filesList(b.Settings.Files)+")")
	} else {
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "EXTENSION\tEVENT\tAT\tORDER\tMATCHER\tTIMEOUT\tON FAILURE\tCOMMAND\tFROM")
		for _, r := range rows {
			ev := r.Event
			if r.NativeEvent != r.Event {
				ev = r.NativeEvent + " (" + r.Event + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Extension, ev, r.At, r.Order, orDash(r.Matcher),
				time.Duration(r.TimeoutMS)*time.Millisecond, r.OnFailure, r.Command, r.File)
		}
		tw.Flush()
	}
	for _, r := range rows {
		if r.Problem != "" {
			fmt.Fprintf(out, "problem: %s: %s\n", r.Extension, r.Problem)
		}
	}
	for _, p := range b.Problems {
		fmt.Fprintln(out, "problem:", p.String())
	}
	for _, f := range b.Settings.Skipped {
		fmt.Fprintf(out, "not read: %s (the project is not trusted: exocortex trust)\n", f.Path)
	}
}

func filesList(fs []toolsettings.HookFile) string {
	var names []string
	for _, f := range fs {
		names = append(names, f.Path)
	}
	return strings.Join(names, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// hookTestRow is one hook's run in hooks test.
type hookTestRow struct {
	Extension string          `json:"extension"`
	Command   string          `json:"command"`
	TookMS    int64           `json:"took_ms"`
	Decision  *decisionReport `json:"decision,omitempty"`
	Failure   string          `json:"failure,omitempty"`
	Kind      string          `json:"failure_kind,omitempty"`
	Skipped   string          `json:"skipped,omitempty"`
}

// decisionReport is a decision as hooks test shows it.
type decisionReport struct {
	Block    bool           `json:"block,omitempty"`
	Ask      bool           `json:"ask,omitempty"`
	Allow    bool           `json:"allow,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Input    map[string]any `json:"updated_input,omitempty"`
	Context  string         `json:"context,omitempty"`
	Output   *string        `json:"updated_output,omitempty"`
	Halt     bool           `json:"halt,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
}

func decisionOf(d cmdhooks.Decision) *decisionReport {
	return &decisionReport{Block: d.Block, Ask: d.Ask, Allow: d.Allow, Reason: d.Reason, Input: d.Input, Context: d.Context, Output: d.Output, Halt: d.Halt || d.HaltReason != "", Warnings: d.Warnings}
}
