// Package toolresult reads tool results the way several built-in extensions
// need to: whether a result is a failure. It is a library, not an extension:
// extensions that need it import it instead of importing the extension that
// diagnoses failures (package diagnosis), so replacing one plugin cannot
// change what the others compute, and the layering rule holds (an extension
// imports the SDK, the protocol, signals and such libraries only).
package toolresult

import (
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Failed reports whether a tool result is a failure: an error, or an output
// with a failure marker, which makes an output a failure even when the tool
// reported none: a Python traceback, a shell that could not find a command, or a
// line starting with "panic: " (Go), "exit status N" or "exit code N" (N not 0),
// "error: " or "fatal: ". The markers are found by plain string scanning: this
// runs on every tool result, several times.
func Failed(r *exocortexv1.ToolResult) bool {
	if r.GetError() != "" {
		return true
	}
	c := r.GetContent()
	if len(c) > 64<<10 {
		c = c[len(c)-64<<10:] // failures show at the end
	}
	low := strings.ToLower(c)
	if strings.Contains(low, "traceback (most recent call last)") || strings.Contains(low, "command not found") {
		return true
	}
	for len(low) > 0 {
		line := low
		if i := strings.IndexByte(low, '\n'); i >= 0 {
			line, low = low[:i], low[i+1:]
		} else {
			low = ""
		}
		switch {
		case strings.HasPrefix(line, "panic: "), strings.HasPrefix(line, "error: "), strings.HasPrefix(line, "fatal: "):
			return true
		case strings.HasPrefix(line, "exit status "), strings.HasPrefix(line, "exit code "), strings.HasPrefix(line, "exit code: "):
			rest := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(line, "exit status "), "exit code: "), "exit code ")
			if rest != "" && rest[0] >= '1' && rest[0] <= '9' {
				return true
			}
		}
	}
	return false
}
