// Package tui is the operator's terminal session: what `exocortex` with no
// arguments opens.
//
// It draws inline by default: finished output (the welcome card, each prompt,
// the agent's steps, its answers) is printed above a small live area, so the
// terminal's own scrollback keeps the whole conversation. An answer is
// printed a finished paragraph at a time while it streams (a code block or a
// table is one paragraph), so every line reaches the scrollback exactly once;
// the live area (the spinner line, the paragraph still being written, the
// input box and the status line) stays under half the screen, and a print
// goes in pieces that leave it room, so the renderer never scrolls part of
// the live area into the scrollback. Its height only grows during a turn, so
// a streamed chunk rewrites changed cells, never the whole area. When the
// width changes, the screen and its scrollback are cleared and everything is
// printed again laid out at the new width (rules, wrapped indentation).
// What the session's messages do not hold but the screen showed (a prompt as
// typed with @file or after a !command, the part of an answer streamed before
// a stop or a crash) is kept beside the session file (shown.go), so a resumed
// session is drawn as it looked.
// --fullscreen draws on the alternate screen with a scrollable transcript.
//
// The parts:
//
//	Engine      the runtime: plugins, the open session and its agent, the
//	            slash commands that need them, the cohesion loop, !commands
//	Model       the Bubble Tea model: input, history, completion, the live
//	            turn, approval dialogs, the welcome card, the status line
//	LineMode    the same engine over plain lines, when stdin or stdout is not
//	            a terminal
//
// The agent loop runs in its own goroutine. Its observer and approver push
// into an inbox the model reads in batches, so the loop never waits on the
// screen; an approval blocks only the loop, on a channel the dialog answers.
// Ctrl+C cancels the turn's context (the loop and a running tool stop; the
// session stays). Subpackages hold what has no screen: history (the input
// history file), slash (commands and completion), stream (reading a reply
// while it streams), transcript (turns, thoughts, exports) and shell (the
// !command runner).
package tui
