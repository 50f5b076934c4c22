// Package extensions holds the built-in extensions, one package each. An extension
// package imports only the SDK (package sdk), the generated protocol, the
// generated signal constants, and library packages under extensions/ that are not
// extensions (textfacts, turn, toolargs, stagelog, toolresult, shellparse,
// entities, catalog): never another extension. What one extension needs of
// another comes through the state keys both declare, so replacing one plugin
// changes what the others see only through that state. TestLayers enforces this
// from the compiled import graph. Package builtin groups the extension packages
// into the plugins the exocortex binary serves when the host re-executes it. They
// run out of process, through exactly the protocol third-party plugins use.
package extensions
