package a0port

import (
	"path"
	"strings"
)

// Agent Zero v1.7's @extensible decorator gives a function two extension
// points, _functions/<module path>/<qualname path>/start and .../end: the
// files there get a dict, data, with the call's args and kwargs, its result
// (a start file may set it, and the function is not called) and the exception
// it raised (an end file may replace or clear it). A _functions point is a
// place in Agent Zero's own code; Exocortex has no such code, so a point runs
// only where an Exocortex hook has the same effect and timing.

// Point is what a _functions point of Agent Zero becomes.
type Point struct {
	// Function is the decorated function, module.qualname (agent.Agent.monologue).
	Function string
	// Hook is the Exocortex hook its files run at; "" when there is none.
	Hook string
	// Kind is how the layer hands the files their data (a0compat's POINTS):
	// "exception", "call", "message:<role>", "tool_result".
	Kind string
	// Note is what the report says of it: the timing at the hook, or why
	// nothing corresponds.
	Note string
}

// The points with an Exocortex counterpart, by function and start/end.
var pointHooks = map[string]map[string]Point{
	"agent.Agent.handle_exception": {
		"start": {Hook: "message_loop_exception", Kind: "exception", Note: "runs when an iteration fails, with data[\"exception\"] the error (its text, as a RuntimeError; a tool's error is the model's result, not an exception); clearing data[\"exception\"] handles it and the monologue goes on"},
		"end":   {Hook: "message_loop_exception", Kind: "exception", Note: "runs when an iteration fails, with data[\"exception\"] the error (its text, as a RuntimeError; a tool's error is the model's result, not an exception); clearing data[\"exception\"] handles it and the monologue goes on; what Agent Zero's own handler did first (its own start/end files) is the other ported files' work"},
	},
	"agent.AgentContext.handle_exception": {
		"end": {Hook: "message_loop_exception", Kind: "exception", Note: "runs when an iteration fails; clearing data[\"exception\"] handles it"},
	},
	"agent.Agent.monologue": {
		"start": {Hook: "monologue_start", Kind: "call", Note: "runs as the monologue starts; data[\"result\"] set here does not replace the monologue"},
		"end":   {Hook: "monologue_end", Kind: "call", Note: "runs as the monologue ends; data[\"result\"] is not the final response (read it from the history)"},
	},
	"agent.Agent.hist_add_ai_response": {
		"start": {Hook: "hist_add_before", Kind: "message:assistant", Note: "runs before the model's reply is added; a change of data[\"args\"][1] (the text) is what is stored"},
		"end":   {Hook: "hist_add_before", Kind: "message:assistant", Note: "runs just before the model's reply is added, not after: Exocortex has no hook after the add; a change of data[\"args\"][1] is what is stored"},
	},
	"agent.Agent.hist_add_warning": {
		"start": {Hook: "hist_add_before", Kind: "message:warning", Note: "runs before a warning (a core message with a signal) is added; a change of data[\"args\"][1] is what is stored"},
		"end":   {Hook: "hist_add_before", Kind: "message:warning", Note: "runs just before a warning (a core message with a signal) is added, not after; a change of data[\"args\"][1] is what is stored"},
	},
	"agent.Agent.hist_add_user_message": {
		"start": {Hook: "hist_add_before", Kind: "message:user", Note: "runs before the operator's message is added"},
		"end":   {Hook: "hist_add_before", Kind: "message:user", Note: "runs just before the operator's message is added, not after"},
	},
	"agent.Agent.hist_add_tool_result": {
		"start": {Hook: "hist_add_tool_result", Kind: "tool_result", Note: "runs before the tool's result is added; a change of data[\"args\"][2] (the result) is what is stored"},
		"end":   {Hook: "hist_add_tool_result", Kind: "tool_result", Note: "runs just before the tool's result is added, not after; a change of data[\"args\"][2] is what is stored"},
	},
	"agent.Agent.__init__": {
		"end": {Hook: "agent_init", Kind: "call", Note: "runs once when the agent is created"},
	},
	"agent.AgentContext.__init__": {
		"end": {Hook: "agent_init", Kind: "call", Note: "runs once when the chat (Exocortex's session) starts"},
	},
}

// Points with no counterpart, by function: why, and what to do instead.
var pointNone = map[string]string{
	"agent.Agent.get_chat_model":        "the host chooses the chat model (config.yaml model:, or --model); a plugin cannot replace it",
	"agent.Agent.get_utility_model":     "the host chooses the utility model (config.yaml utility_model:); plugins call it through call_utility_model",
	"agent.Agent.get_embedding_model":   "the memory store chooses its embedding model (config.yaml memory:); embedding_model_changed reports a change",
	"agent.Agent.get_browser_model":     "Exocortex has no browser agent",
	"agent.AgentContext.reset":          "Exocortex has no hook when a session is reset: a new session fires agent_init",
	"agent.AgentContext.remove":         "Exocortex has no hook when a session is removed",
	"agent.Agent.call_chat_model":       "the core calls the model: use chat_model_call_before/after",
	"agent.Agent.call_utility_model":    "use util_model_call_before/after",
	"agent.Agent.handle_intervention":   "the operator's interventions are the core's; message_loop_end may queue one",
	"agent.Agent.process_tools":         "the core runs the tools: use tool_execute_before/after",
	"agent.Agent.prepare_prompt":        "the core builds the prompt: add text at message_loop_prompts_after",
	"agent.Agent.get_system_prompt":     "the core builds the system prompt: add text at system_prompt",
	"agent.Agent.read_prompt":           "prompt files are read in the plugin (the layer's read_prompt)",
	"agent.Agent.parse_prompt":          "prompt files are read in the plugin (the layer's parse_prompt)",
	"__main__.init_a0":                  "Agent Zero's process start (its web UI, watchdogs): the host starts and watches plugins itself (hot reload)",
	"initialize.initialize_agent":       "Agent Zero's process start: the host reads config.yaml",
	"helpers.ui_server":                 "Agent Zero's web UI",
	"helpers.secrets":                   "Exocortex keeps secrets in the host",
	"models.get_api_key":                "the host reads model keys from its config",
	"agent.AgentContext.communicate":    "messages reach the agent through the host",
	"agent.AgentContext._process_chain": "use process_chain_end",
}

// parsePoint reads a _functions point, the folders between _functions/ and
// the file (agent/Agent/monologue/start), as function and start/end.
func parsePoint(p string) (fn, when string, ok bool) {
	dir, when := path.Split(p)
	if when != "start" && when != "end" {
		return "", "", false
	}
	dir = strings.Trim(dir, "/")
	if dir == "" {
		return "", "", false
	}
	return strings.ReplaceAll(dir, "/", "."), when, true
}

// LookupPoint returns what the _functions point p (agent/Agent/monologue/start)
// becomes. ok is false when p is not a point (no start/ or end/ folder).
func LookupPoint(p string) (pt Point, ok bool) {
	fn, when, ok := parsePoint(p)
	if !ok {
		return Point{}, false
	}
	pt.Function = fn
	if m, found := pointHooks[fn][when]; found {
		m.Function = fn
		return m, true
	}
	why := ""
	for f, w := range pointNone {
		if fn == f || strings.HasPrefix(fn, f+".") {
			why = w
			break
		}
	}
	if why == "" {
		why = "it is a place in Agent Zero's own code that Exocortex does not run"
	}
	pt.Note = "no counterpart: " + fn + " (" + when + "): " + why
	return pt, true
}
