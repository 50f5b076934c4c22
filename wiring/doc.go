// Package wiring is the model of how Exocortex's parts are connected, built from
// the parts' own declarations, and the generator of WIRING.md.
//
// The seed system kept its wiring diagram by hand; it went stale, and the bugs its
// "known fragile seams" table lists were all places where two files disagreed about
// something the diagram said. Here nothing is written twice: a Model holds what the
// plugins declare in their manifests (extensions with their hook, order, state keys
// read, written and reset, whether they are sent the whole conversation or the
// prompt so far, the tools they are limited to; tools, data files), the built-in
// state keys of proto/exocortex/v1/state.proto, the prompt files' front matter and
// the generated signal constants of package signals. Build derives the Graph
// everything else reads (the pipeline in firing order, every key with its writers
// and readers, every data file with its users), and Render writes it out as
// Markdown, byte for byte the same for the same declarations.
//
// Which extensions run follows the host exactly: plugins are taken in priority
// order (Plugin.Priority, then name); an extension name found again at the same hook
// in a later plugin is shadowed by the first; an extension runs unless it is
// disabled by the operator's configuration, or shipped disabled and not enabled
// there. Package lint checks the same Graph, so the document and the checks cannot
// disagree either.
package wiring
