// Package lint checks the wiring of an Exocortex installation: what the plugins
// declare in their manifests, the built-in state keys, the prompt files and their
// signals, the generated signal constants, the files in and around the plugin
// directories, and WIRING.md. Every "known fragile seam" of the seed system is
// either impossible by construction in Exocortex or has a finding code here; see
// Codes, and docs/lint-codes.md for the table with fixes.
//
// Check is a pure function of an Input: it does no I/O and returns the same
// findings, in the same order, for the same input. The loaders (LoadPrompts,
// ScanTree, and the command's discovery through core/host) fill the Input.
//
// # Which extensions count
//
// The checks see what the host would run (package wiring applies the host's
// rules): an extension shadowed by a higher-priority plugin, disabled by the
// configuration, or shipped disabled and not enabled does not run. Rules about
// who reads and writes what look only at running extensions, and name the ones
// that do not run when that is the cause (a resetter that is disabled, EXO052).
//
// # Timing (rule 3: EXO033, EXO034)
//
// The checks simulate the declared pipeline through two sessions of two
// monologues of two iterations each, in the order core/loop fires the hooks:
//
//	session:    reset iteration, monologue and session keys; agent_init
//	monologue:  reset monologue keys; hist_add_before (the user's message); monologue_start
//	iteration:  reset iteration keys; message_loop_start, util_model_call_before,
//	            util_model_call_after, message_loop_prompts_before,
//	            system_prompt, message_loop_prompts_after, before_main_llm_call,
//	            chat_model_call_before, reasoning_stream_chunk, reasoning_stream,
//	            response_stream_chunk, response_stream, chat_model_call_after,
//	            reasoning_stream_end, response_stream_end, hist_add_before (the reply),
//	            error_format, tool_execute_before, tool_execute_after,
//	            hist_add_before (the tool result), message_loop_exception,
//	            message_loop_end, hist_add_before (an intervention)
//	            then monologue_end, process_chain_end
//
// Within a hook extensions fire in ascending order; an extension reads its keys
// before it writes them; a once_per_session extension fires only the first time
// its hook fires in a session; a persistent key starts with a value left by an
// earlier run. An error_format and a tool call do not both happen in one real
// iteration; the simulation runs both, which can only hide a finding, never
// invent one.
//
// Each read is then classed: empty (no value since the key's last reset), fresh
// (written in the reader's own iteration, or before the iterations of its
// monologue, at agent_init, hist_add_before or monologue_start; for a reader at
// monologue_end, anywhere in its monologue), or stale (written in an earlier
// iteration, monologue or session).
//
//   - EXO033, error: every read of the key by that extension is empty. Examples:
//     an iteration-scoped key read at message_loop_prompts_after and written only
//     at tool_execute_after (reset at the next message_loop_start before anyone
//     reads it); a monologue-scoped key written only at monologue_end.
//   - EXO034, info: some reads are stale, or some empty, so the reader fires
//     before any writer of the key in the same iteration. This is what "read at
//     a hook that fires before any writer in the same iteration" means for keys
//     that outlive an iteration: a monologue- or session-scoped key written late
//     in the previous iteration (error_diagnosis, written at tool_execute_after
//     and read at tool_execute_before) gives the reader the previous iteration's
//     value, and nothing the first time. That is often the point, so it is
//     reported as information, with the writers named. It is not reported when the reader writes the key itself
//     (it keeps its own state across calls) or fires at hist_add_before (it
//     fires at every history add, so an earlier value is what it gets by design).
//
// Keys owned by "core" are written by the host and are left out of rule 3.
//
// # Flags and gates (rules 5 and 9)
//
// A flag is a key kept across monologues (session or persistent scope; the
// host resets narrower scopes itself, so those cannot stick) that is declared
// with flag set, or is a google.protobuf.BoolValue, an integer wrapper
// (Int32Value and kin: a counter or a level), or a known message whose one field
// is a bool or an integer. A flag that a running extension sets must have a
// running resetter: EXO051 when there is none, EXO052 when the only resetters
// are disabled or shadowed — the seed's action gate, stuck when the extension
// that cleared it was disabled. A setter lists the key in writes and not in
// resets; an extension that lists it in resets clears it (writing false or zero
// is a clear) and is never reported as a setter.
//
// A hand-rolled once-per-session gate (EXO091) is judged by use, not by type: a
// key kept across monologues that extensions read and set (write, not reset) at
// two or more hooks. One extension name registered at both hooks, or two names
// sharing the key (the seed's layout: one file deployed at two hooks), make the
// same mistake: whichever hook fires first sets the key and the others skip for
// the session. The key may be anything that can hold a gate: a BoolValue, an
// Int32Value counter, a Struct (a field inside it), a message with a bool or
// integer field of its own (memory_catalog_built); lists and maps are data
// (a log, per-tool counts). The host's once primitive
// (ExtensionSpec.once_per_session) is keyed by extension and hook, so it cannot
// make that mistake.
//
// # Near-miss names (rule 3: EXO035)
//
// A key read and never written, or written and never read, whose name is one
// edit from another key's (two edits from eight characters), is most likely
// that key misspelt (fail_tracker, fail_trackers); the pair is reported once,
// at the reader.
//
// # Prompt text in plugins (rule 1: EXO017)
//
// FindPromptText reads each plugin's executable (a Go binary keeps its string
// literals in its string data) and the source files beside it (Python, Go), and
// looks for the opening of every prompt that carries a signal, built-in or
// override: each literal phrase of its first line between template variables
// (the opening first), cut to at most 20 characters at a word boundary (a port
// tests a prefix), 12 at least; phrases after the opening only in source files,
// since an executable built with package signals holds the prompts'
// descriptions, whose words they may share. A shorter phrase of two words or more ("The
// call to", "was not run") is looked for only in source files, as a whole
// string literal, since such words are everywhere in an executable's string
// data. A plugin that holds one recognises the core's message by its wording; the
// finding names the signal constant to compare instead. Built-in plugins embed
// the prompts themselves and are not searched.
//
// # Orders (rule 4)
//
// EXO041: two extensions at one hook with one order. EXO042: a name with a
// numeric prefix in the seed's style (_15_x, 15_x, 015-x) whose number is not its
// order; when the prefix has a leading zero and its octal value is the order, the
// message names Go's octal literal trap (Order: 010 is 8). EXO043: at one hook,
// two numbered names whose string order differs from their integer order
// ("_10_y" sorts before "_9_x" as strings): Agent Zero ran extensions in string
// order and Exocortex runs them in integer order, so a port that kept such names
// changed its order silently; zero-padding the prefixes makes both orders agree.
//
// # Plugin-looking files (rule 8)
//
// The loader's rule is package discover's: a plugin is an executable directly in
// a plugin directory, or a directory directly in it holding an executable of its
// own name or a plugin.json with a command. A file looks like a plugin when it is
// executable, a script (.py, .sh, .js, .ts, .rb, .pl), numbered like _50_name.py,
// a plugin.json, or the go.mod or main.go of a plugin that was never built.
// Inside a plugin directory: a hook-named directory holding such files is an
// error (EXO081, the seed's extensions/<hook>/ trap); any other directory holding
// them without being a plugin is a warning (EXO083); a script directly in the
// directory without its execute bit is a warning (EXO085). In the Around
// directories, which the loader never scans, plugins and hook-named directories
// are warnings (EXO082). What the loader itself skips (Input.Skipped, from
// the host) is reported too: a plugin file without its execute bit, found by
// its name or its first bytes (EXO085), a configured plugin directory that
// does not exist (EXO086), an untrusted project's plugins (EXO087).
//
// # Tools (rule 11)
//
// Declared tools must be implemented (EXO111) and documented by a prompt file
// that exists (EXO113, EXO114), and a tool prompt must document a declared tool
// (EXO112). An extension's for_tools makes the host call it at the hooks that
// fire for one tool call (tool_execute_before, tool_output_update,
// tool_execute_after, hist_add_tool_result) only for the tools named, so each
// name must be a tool some loaded plugin (or the loop) provides: otherwise a
// renamed tool switches the extension off without a word (EXO115; a warning
// while a plugin that might provide it did not load). for_tools anywhere else
// limits nothing (EXO116). reads_history and reads_prompt ask the host for
// request fields, so each at a hook whose requests have no such field is a
// warning (EXO117).
package lint
