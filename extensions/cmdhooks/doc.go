// Package cmdhooks is the command-hook bridge: the hook scripts operators
// wrote for Claude Code, Gemini CLI and Codex run unchanged at the matching
// Exocortex hooks, and are held to Exocortex's rule that nothing fails
// silently.
//
// The host names the configuration files (toolsettings.CommandHooks.Files:
// the user's ~/.claude/settings.json, ~/.gemini/settings.json,
// ~/.codex/hooks.json and $EXOCORTEX_HOME/hooks.json always; a project's
// .claude/settings.json, .claude/settings.local.json, .gemini/settings.json,
// .codex/hooks.json and .exocortex/hooks.json only when it is trusted). Load
// reads them into Hooks, each with its event in Claude Code's names (Gemini
// CLI's BeforeTool is PreToolUse, and so on), and Bridge.Plugin serves one
// extension per hook at its Exocortex hook, named hook_DIALECT_EVENT_N:
//
//	PreToolUse (BeforeTool)          tool_execute_before, order 900+N
//	PostToolUse, PostToolUseFailure  tool_execute_after (AfterTool: both)
//	UserPromptSubmit (BeforeAgent)   hist_add_before, the operator's message
//	Stop, SubagentStop (AfterAgent)  message_loop_end of the final iteration
//	SessionStart                     agent_init; its context in every prompt
//	SessionEnd                       when the host stops the plugin
//	PreCompact (PreCompress)         history_compress_before (keep in the summary)
//	PermissionRequest                tool_approval_request (allow, deny; fails closed)
//	Notification                     operator_notification (advisory)
//
// Hooks that match one occurrence run at once (group.go); the host takes
// their answers in order, so deny wins and changes combine in order.
//
// A hook reads its payload (Payload) on stdin and answers as in those tools
// (Decide): exit 0 with JSON, exit 2 blocks with stderr as the reason, any
// other exit is a warning. Tool calls are translated both ways (Translate,
// Back): code_execution's terminal is Bash (run_shell_command), text_editor
// is Read, Write and Edit (read_file, write_file, replace).
//
// What differs: a hook that cannot run or answer (Failure: missing, not
// executable, timed out, crashed, output over the limit, unparseable) is an
// error of its extension, which the host reports and which, at
// tool_execute_before, stops the call (guards fail closed) unless the entry
// says "fail_open": true. docs/command-hooks.md has every field.
package cmdhooks
