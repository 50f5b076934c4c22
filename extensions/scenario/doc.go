// Package scenario holds the end-to-end tests of the built-in extension suite:
// the exocortex binary, its built-in plugins as real processes, and the scripted
// Ollama-protocol server playing the model. Each test is one of the behaviours
// the suite exists for: a looping model escalated and stopped, a failing tool
// diagnosed with the advice reaching the next prompt, a destructive command held
// for the operator, a claim without evidence flagged, a file write backed up and
// a truncated one caught. It also pins down that an extension declared the seed's
// way (prompt injection at before_main_llm_call) is refused at every layer.
//
// The package has no code of its own; its benchmark measures the hook time of an
// iteration with the whole suite loaded (docs/perf/suite.md).
package scenario
