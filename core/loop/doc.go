// Package loop is the agent loop: the whole hook pipeline of one monologue, in one
// place. A monologue is the work on one user message; it runs iterations until a
// tool ends it (the response tool), an extension stops it, or a limit is reached.
//
//	agent_init                      once per session (Agent.Init)
//	hist_add_before                 the user message (and every message added later)
//	monologue_start                 monologue-scoped state was just reset
//	per iteration:                  iteration-scoped state was just reset
//	  message_loop_start
//	  message_loop_prompts_before   ┐ the prompt is assembled; these three hooks
//	  system_prompt                 │ may add prompt blocks, and only these: their
//	  message_loop_prompts_after    ┘ text reaches this iteration's model call
//	  before_main_llm_call          the prompt is final: state work only
//	  response_stream_chunk         per streamed piece of the reply (64 bytes or a line,
//	                                at most 20 a second)
//	  response_stream_end
//	  hist_add_before               the reply
//	  error_format                  when the reply is unusable (with a signal)
//	  tool_execute_before           may rewrite arguments, block, or ask the operator
//	  tool_execute_after            may annotate or replace the result
//	  hist_add_before               the tool result
//	  message_loop_end              always, even after a failure; may queue an
//	                                intervention or stop the monologue
//	monologue_end                   always
//
// Extensions of one hook run in ascending integer order across all plugins, each
// seeing the state the previous one wrote. That is the semantics; to spend fewer
// round trips between processes, fire (schedule.go) sends a plugin's
// consecutive extensions as one batch over its Dispatch stream, and calls
// extensions of different plugins at once where their declared keys and files
// show the order cannot be told apart. A hook_done event gives each firing's
// wall time. The core injects its own messages
// (repeat, misformat, unusable-reply limit, tool not found, …) from prompt files
// and attaches the signal their front matter names, so extensions test
// msg.Signal == signals.Repeat and never the wording.
//
// Failure isolation: an extension that fails (error, crash, missed deadline, a
// response its hook does not allow, a state write it did not declare) is skipped
// for this call and reported as an event; the turn goes on, unless the extension's
// manifest marks it required, in which case the monologue stops with the error.
package loop
