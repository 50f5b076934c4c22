package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// A process of this binary spends about a third of its start's CPU in the
// garbage collector while its packages initialise (about 10 MB allocated by
// package init, the markdown highlighter's lexers above all, against a first
// heap goal of 4 MB): 54 → 36 CPU-ms for `exocortex --version` with the
// collector off. The host starts seven built-in plugin processes before the
// first model request, so it starts them with GOGC=off, and each, first thing
// in main, puts the collector back as the operator had it (their GOGC, saved
// in StartupGOGCEnv) and the environment back as it was, so no command a
// plugin runs inherits the setting and nothing a hook observes changes
// (docs/perf/startup.md).

// StartupGOGCEnv holds, for a built-in plugin started with GOGC=off, the GOGC
// the host had ("" when unset).
const StartupGOGCEnv = "EXOCORTEX_STARTUP_GOGC"

// startupGCEnv is the environment a built-in plugin is started with.
func startupGCEnv() []string {
	return []string{"GOGC=off", StartupGOGCEnv + "=" + os.Getenv("GOGC")}
}

// restoreStartupGC undoes startupGCEnv in a process started with it: the
// collector as GOGC was in the host, GOGC and StartupGOGCEnv as they were.
func restoreStartupGC() {
	orig, ok := os.LookupEnv(StartupGOGCEnv)
	if !ok {
		return
	}
	debug.SetGCPercent(gcPercent(orig))
	os.Unsetenv(StartupGOGCEnv)
	if orig == "" {
		os.Unsetenv("GOGC")
	} else {
		os.Setenv("GOGC", orig)
	}
}

// gcPercent reads a GOGC value as the runtime does: "off" is -1, a number is
// itself, anything else (or nothing) the default 100.
func gcPercent(v string) int {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "off") {
		return -1
	}
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	return 100
}
