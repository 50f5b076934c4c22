package diagnosis

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/toolresult"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Class is one row of the error table: the patterns that recognise it (matched,
// case-insensitively, against the tool's error, then its output), what
// usually causes it, what to do and what not to do.
type Class struct {
	Name      string
	Patterns  []string
	Cause     string
	Suggested []string
	Anti      []string
	// Transient errors may succeed when retried unchanged.
	Transient bool
	// Confidence of a match (generic classes are less sure).
	Confidence float64
}

// None is the class of a successful output.
const None = "none"

// Unknown is the class of a failure no pattern recognises.
const Unknown = "unknown"

// Table returns the error table, in match order: the first class with a matching
// pattern wins, so specific classes come before generic ones.
func Table() []Class {
	return []Class{
		{Name: "blocked", Patterns: []string{`^blocked by `},
			Cause:     "an extension stopped the call before it ran (a tier-4 action needing the operator, or a repeated failing call)",
			Suggested: []string{"read the reason given", "choose a safer action inside the work directory, or ask the operator with the response tool"},
			Anti:      []string{"repeating the blocked call unchanged"}, Confidence: 0.95},
		{Name: "permission", Patterns: []string{`permission denied`, `operation not permitted`, `eacces`, `\b403\b`, `access is denied`, `read-only file system`},
			Cause:     "the process may not touch that path or resource",
			Suggested: []string{"work on a path inside the work directory", "ask the operator for access"},
			Anti:      []string{"sudo", "chmod -R 777"}, Confidence: 0.9},
		{Name: "not_found", Patterns: []string{`no such file or directory`, `enoent`, `cannot find the (path|file)`, `does not exist`, `not found`, `\b404\b`, `no such`},
			Cause:     "the path, name or resource given does not exist",
			Suggested: []string{"list the directory to find the right name", "check spelling, case and the working directory"},
			Anti:      []string{"retrying the same path"}, Confidence: 0.85},
		{Name: "missing_dependency", Patterns: []string{`modulenotfounderror`, `no module named`, `command not found`, `cannot find package`, `importerror`, `could not import`, `not installed`, `executable file not found`},
			Cause:     "a program, module or package the code needs is not installed",
			Suggested: []string{"check what is installed (which, pip list, go list)", "use an installed alternative, or ask the operator before installing"},
			Anti:      []string{"installing system packages without asking"}, Confidence: 0.9},
		{Name: "syntax", Patterns: []string{`syntaxerror`, `syntax error`, `unexpected token`, `parse error`, `invalid syntax`, `indentationerror`, `unexpected eof`, `expected .* found`},
			Cause:     "the code or data given does not parse",
			Suggested: []string{"read the line the error names", "fix quoting, brackets and indentation, then run again"},
			Anti:      []string{"rerunning unchanged code"}, Confidence: 0.9},
		{Name: "invalid_arguments", Patterns: []string{`argument`, `invalid value`, `unknown flag`, `usage:`, `is required`, `missing required`, `unrecognized option`, `must be`},
			Cause:     "the tool or command was called with wrong or missing arguments",
			Suggested: []string{"check the tool's arguments in its description", "pass every required argument with the right type"},
			Anti:      []string{"guessing argument names"}, Confidence: 0.75},
		{Name: "timeout", Patterns: []string{`timed out`, `deadline exceeded`, `timeout`},
			Cause:     "the call took longer than allowed",
			Suggested: []string{"do less per call (a smaller input, a narrower command)", "retry once if the service was slow"},
			Anti:      []string{"raising the work per call"}, Transient: true, Confidence: 0.85},
		{Name: "network", Patterns: []string{`connection refused`, `no route to host`, `could not resolve`, `name resolution`, `network is unreachable`, `connection reset`, `econnreset`, `tls handshake`},
			Cause:     "the network or the remote service is not reachable",
			Suggested: []string{"check the address and that the service runs", "retry once later, or work from local sources"},
			Anti:      []string{"hammering the service with retries"}, Transient: true, Confidence: 0.85},
		{Name: "resource", Patterns: []string{`no space left`, `out of memory`, `cannot allocate memory`, `killed`, `too many open files`, `disk quota`},
			Cause:     "the machine ran out of a resource (disk, memory, file handles)",
			Suggested: []string{"work on smaller pieces", "tell the operator what ran out"},
			Anti:      []string{"retrying the same large job"}, Confidence: 0.85},
		{Name: "test_failure", Patterns: []string{`--- fail`, `assertionerror`, `\bfailed\b.*\btests?\b`, `\btests? failed`, `failures=`, `\bfail\s+\S+`},
			Cause:     "tests ran and some failed",
			Suggested: []string{"read the first failing test's message", "fix the code (not the test) unless the test is wrong"},
			Anti:      []string{"claiming the task is done", "deleting or skipping the failing test"}, Confidence: 0.85},
		{Name: "runtime", Patterns: []string{`traceback \(most recent call last\)`, `^panic:`, `\bpanic:`, `exception`, `exit status [1-9]`, `exit code [1-9]`, `segmentation fault`, `\berror\b`},
			Cause:     "the program ran and failed",
			Suggested: []string{"read the last lines of the output for the cause", "reproduce with a smaller input"},
			Anti:      []string{"rerunning unchanged"}, Confidence: 0.6},
	}
}

// Failed reports whether a tool result is a failure (toolresult.Failed).
func Failed(r *exocortexv1.ToolResult) bool { return toolresult.Failed(r) }

// compiled is the table with its patterns compiled, built once: Diagnose runs
// on every failure. Immutable.
var compiled = compile(Table())

type compiledClass struct {
	Class
	res []*regexp.Regexp
}

func compile(t []Class) []compiledClass {
	out := make([]compiledClass, len(t))
	for i, cl := range t {
		out[i].Class = cl
		for _, p := range cl.Patterns {
			out[i].res = append(out[i].res, regexp.MustCompile(`(?im)`+p))
		}
	}
	return out
}

// Diagnose classifies a tool result. A success gives class none.
func Diagnose(tool string, r *exocortexv1.ToolResult) *exocortexv1.ErrorDiagnosis {
	if !Failed(r) {
		return &exocortexv1.ErrorDiagnosis{ErrorClass: None, ToolName: tool, Confidence: 1}
	}
	for _, cl := range compiled {
		for _, text := range []string{r.GetError(), r.GetContent()} {
			if text == "" {
				continue
			}
			for _, re := range cl.res {
				loc := re.FindStringIndex(text)
				if loc == nil {
					continue
				}
				return &exocortexv1.ErrorDiagnosis{
					ErrorClass: cl.Name,
					ToolName:   tool,
					CausalChain: []string{
						fmt.Sprintf("%s failed: %s", tool, evidenceLine(text, loc[0])),
						"class " + cl.Name + ": " + cl.Cause,
					},
					SuggestedActions: cl.Suggested,
					AntiActions:      cl.Anti,
					Confidence:       cl.Confidence,
				}
			}
		}
	}
	return &exocortexv1.ErrorDiagnosis{
		ErrorClass:       Unknown,
		ToolName:         tool,
		CausalChain:      []string{fmt.Sprintf("%s failed: %s", tool, evidenceLine(r.GetError()+r.GetContent(), 0))},
		SuggestedActions: []string{"read the whole output", "try a smaller, simpler step"},
		AntiActions:      []string{"repeating the call unchanged"},
		Confidence:       0.3,
	}
}

// IsTransient reports whether the class may succeed when retried unchanged.
func IsTransient(class string) bool {
	for _, cl := range compiled {
		if cl.Name == class {
			return cl.Transient
		}
	}
	return false
}

// evidenceLine is the line of text containing offset, trimmed and shortened.
func evidenceLine(text string, offset int) string {
	start := strings.LastIndexByte(text[:offset], '\n') + 1
	end := strings.IndexByte(text[offset:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += offset
	}
	line := strings.TrimSpace(text[start:end])
	if r := []rune(line); len(r) > 160 {
		line = string(r[:160]) + "…"
	}
	return line
}
