// Package wirecheck is the contract between the plugin host and the wiring
// check it is given. The host (core/host) starts plugins and reads their
// manifests; the wiring lint (package lint, above core) knows what a correct
// wiring is. The host must not depend on the lint, so it takes a Func in its
// options and calls it with what it loaded, at start and before every hot
// reload: one rule for both.
//
// Plugin is the model of one loaded plugin both sides share (package wiring
// aliases it), so the host hands over exactly what the lint reads.
package wirecheck

import exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"

// Plugin is one plugin the host found, with the manifest it answered or the
// reason it could not.
type Plugin struct {
	// Name is the plugin's name from discovery (the file or directory name); the
	// host knows a plugin by it.
	Name string
	// Path is the executable, or the plugin's directory when plugin.json starts it.
	Path string
	// Dir is the plugin directory it was found in ("" for plugins built into the
	// exocortex binary).
	Dir string
	// Priority is the plugin's place in the search order: lower loads first and
	// wins when two plugins declare the same extension or tool.
	Priority int
	// Manifest is nil when the plugin could not be loaded.
	Manifest *exocortexv1.ManifestResponse
	// LoadError says why the plugin could not be started, hand-shaken or asked
	// for its manifest.
	LoadError error
	// StderrTail holds the last lines the plugin wrote to stderr.
	StderrTail string
}

// Input is what the host hands the check: every plugin it found, loaded or
// not, and the operator's enabled and disabled extensions.
type Input struct {
	Plugins           []Plugin
	Disabled, Enabled map[string]bool
}

// Finding is one problem the check reports, located by plugin, extension, key
// and file where they apply.
type Finding struct {
	Code string
	// Error is true for findings that mean something will not work as declared;
	// only those keep a plugin out.
	Error                        bool
	Plugin, Extension, Key, File string
	Message, Fix                 string
}

// ID identifies a finding across two checks of different plugin sets, so a
// check before a change and one after can be compared.
func (f Finding) ID() string {
	return f.Code + "\x00" + f.Plugin + "\x00" + f.Extension + "\x00" + f.Key + "\x00" + f.File
}

// String renders the finding on one line with its fix, e.g.
// "EXO031 plugin=p extension=e key=k: ... (fix: ...)".
func (f Finding) String() string {
	s := f.Code
	for _, kv := range [][2]string{{"plugin", f.Plugin}, {"extension", f.Extension}, {"key", f.Key}, {"file", f.File}} {
		if kv[1] != "" {
			s += " " + kv[0] + "=" + kv[1]
		}
	}
	s += ": " + f.Message
	if f.Fix != "" {
		s += " (fix: " + f.Fix + ")"
	}
	return s
}

// Func checks the wiring of a set of plugins. It must not start or stop
// anything; the host may call it several times at start to find which
// plugins to keep out.
type Func func(Input) []Finding
