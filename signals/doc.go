// Package signals names the framework messages the loop adds to the history.
//
// When the loop tells the model something on its own account (the reply repeated
// the previous one, the reply was not valid JSON, the tool does not exist, ...),
// the message carries a signal: a short snake_case value such as "repeat". An
// extension that reacts to such a message tests
//
//	msg.Signal == signals.Repeat
//
// and never the text, which lives in a prompt file and may be reworded, or
// overridden by the operator, at any time. The constants are generated from the
// signal: field of the prompt files' front matter (prompts/*.md), so a signal
// cannot exist in code without its prompt or the other way round; go test fails
// when signals_gen.go is older than the prompts.
package signals

//go:generate go run ./internal/gensignals -prompts ../prompts -out signals_gen.go -py ../sdk/python/exocortex/signals.py

// Info describes one signal.
type Info struct {
	Name        string // the Go constant, e.g. "ToolNotFound"
	Value       string // the value messages carry, e.g. "tool_not_found"
	PromptFile  string // the prompt that declares it, e.g. "prompts/fw.msg_tool_not_found.md"
	Description string // when the message is sent, from the prompt's front matter
}
