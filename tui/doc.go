// Package tui is the operator's terminal session: what `exocortex` with no
// arguments opens.
//
// It draws inline by default: finished output (the welcome card, each prompt,
// the agent's steps, its answers) is printed above a small live area, so the
// terminal's own scrollback keeps the whole conversation, and a streamed chunk
// redraws only the live area (the spinner line, the tail of the answer being
// written, the input box and the status line), whose height only grows during
// a turn, so the renderer rewrites changed cells and never the whole screen.
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
