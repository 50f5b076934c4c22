// Package replay answers an extension author's question "what does my change
// do to the sessions I already had?": it feeds a recorded session back
// through today's plugins and reports what reached the model differently.
//
// # Recordings
//
// A session is recorded as the loop's own events (loop.Event, the lines
// `exocortex run --json` writes) with loop.Options.RecordRequests set, which
// adds two kinds: a "request" event per iteration (the base system prompt,
// every prompt block with the extension and hook that made it, every message
// sent, by part) and a "tool_executed" event with what the tool itself
// returned. Events pass the loop's secret masking before they are written,
// so a secret is recorded as its placeholder, §§secret(NAME).
//
// A request repeats most of the previous one (the history grows by a few
// messages), so a message's content is stored once under its sha256 and
// referenced by hash afterwards:
//
//	sessions/NAME.jsonl                  the session (core/session)
//	sessions/NAME.replay/events.jsonl    the recording (Recorder)
//	sessions/NAME.replay/blobs/ab/ab12…  message contents, by hash
//
// A `run --json` stream is a recording too: its request events carry a
// content the first time the stream sends it and only the hash afterwards
// (Dedup).
//
// # Replays
//
// Load reads either form into turns and iterations. Run replays them: one
// monologue per recorded user message, through a real host's plugins, with
// a scripted model server (core/llm/scripted) serving the recorded replies,
// so no model is called. Tools are not run again: Options.RerunTools unset,
// the recorded result of the same call is served (loop.Options.ToolExecutor),
// except for the tools that write the memory (memory_save, memory_delete,
// memory_forget), which run again against the replay's own memory (the
// caller's scratch home) so that later turns recall what they wrote.
//
// Each replayed iteration is compared with the recorded one (Compare): prompt
// blocks added, removed or changed, the base system prompt, the history sent,
// state keys written, signals, tool calls, extension errors. When the loop
// takes another path than the recording (a tool call refused or changed, the
// monologue ending earlier or going on longer), Run stops that turn there and
// reports the Divergence: feeding the recorded replies past it would answer
// a conversation that no longer happened.
package replay
