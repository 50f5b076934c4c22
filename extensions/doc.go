// Package extensions holds the built-in extensions, one package each. An extension
// package imports only the SDK (package sdk), the generated protocol and the
// generated signal constants; package builtin groups them into the plugins the
// exocortex binary serves when the host re-executes it. They run out of process,
// through exactly the protocol third-party plugins use.
package extensions
