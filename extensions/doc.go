// Package extensions holds the built-in extensions, one package each. An
// extension package imports only the SDK (package sdk), the generated
// protocol, the generated signal constants, the settings the host sends its
// tools (package toolsettings; never config, which reads config.yaml), the
// sandbox launcher (package sandbox), and the
// extensions' shared libraries under extensions/internal/ (textfacts, turn,
// toolargs, stagelog, toolresult, toolstream, shellparse, entities, catalog),
// which the compiler lets no package outside extensions/ import: never another
// extension. Every other folder of extensions/ is an extension. What one
// extension needs of another comes through the state keys both declare, so
// replacing one plugin changes what the others see only through that state.
// TestLayers enforces this from the compiled import graph (go list), with the
// imports still to move listed there (awaitingMemoryService). Package builtin groups the extension packages into
// the plugins the exocortex binary serves when the host re-executes it. They
// run out of process, through exactly the protocol third-party plugins use.
//
// The sandbox is a library, not a host service: confining a process is done
// by the one that starts it (the launcher re-executes the running binary in
// new namespaces under Landlock, then the command), and code_execution's
// shells and the data tools' scripts are the tool plugin's own children, whose
// pipes, process groups and persistent shells the plugin keeps. Routing them
// through the host would make the host the parent of every tool process and
// put a second transport under their output for nothing a library cannot do.
// Package sandbox holds no host state and imports no package of the module,
// and the policy it applies arrives resolved in the settings the host sends
// (toolsettings.Confinement: write roots, hidden secrets, network). TestLayers
// keeps it so: sandbox and toolsettings compile in none of config, memory,
// staging, core or sdk.
//
// Long-term memory is the host's too: the memory extensions (recall, memorize,
// ontology, memorytools) reach the home's memory service through the host
// (sdk.Call.Memory, declared with the plugin's UsesMemory and
// MemoryWriteAreas), as any third-party plugin does, and the staging logs
// through extensions/internal/stagelog; no extension imports memory,
// memory/embed or staging (memory_layers_test.go checks it).
package extensions
