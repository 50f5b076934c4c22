package main

import (
	goruntime "runtime"
	"runtime/debug"
	"strings"
)

// versionText is `exocortex --version`: the module version, the commit it
// was built from (with "+dirty" for uncommitted changes) and its time, and
// the Go version, all from the build information the Go toolchain stamps
// into the binary (debug.ReadBuildInfo; vcs.* when built inside a checkout).
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return versionOf(bi)
}

// versionOf renders the build information bi (nil when there is none).
func versionOf(bi *debug.BuildInfo) string {
	version, commit, when, dirty := "(devel)", "", "", false
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	parts := []string{"exocortex " + version}
	switch {
	case commit != "":
		c := commit
		if dirty {
			c += "+dirty"
		}
		if when != "" {
			c += " (" + when + ")"
		}
		parts = append(parts, "commit "+c)
	default:
		parts = append(parts, "commit unknown (not stamped: built outside a git checkout, in a git worktree, or with -buildvcs=false)")
	}
	parts = append(parts, goruntime.Version(), goruntime.GOOS+"/"+goruntime.GOARCH)
	return strings.Join(parts, ", ")
}
