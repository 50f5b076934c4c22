// Package quality post-processes tool output: the response finalizer cleans what
// the model will read, and the code-quality gate judges the output of code runs.
//
// Response finalizer (tool_execute_after, order 22, as in the seed). For every
// result except the response tool's:
//   - terminal escape sequences (colours, cursor moves) are removed, and of a line
//     rewritten with carriage returns (progress bars) only the last state is kept;
//   - trailing spaces are cut, and runs of blank lines become one;
//   - content longer than MaxContent characters keeps its first Head and last Tail
//     characters, with a note saying how many were left out (errors are usually
//     at the end).
//
// The content is replaced only when one of these changed it.
//
// Code-quality gate (tool_execute_after, order 27, as in the seed), for
// code_execution and data_analyze results:
//   - failing tests are read from Go ("--- FAIL: TestX", "FAIL pkg"), pytest
//     ("FAILED path::test", "N failed"), unittest ("FAILED (failures=N)") and
//     Jest ("Tests: N failed") output; passing ones from "ok pkg", "N passed";
//   - warnings are lines with "warning" (compilers, DeprecationWarning, vet);
//   - the verdict is tests_failed, errors (the run failed), warnings,
//     tests_passed or clean, in that order, and is written to code_quality (the
//     epistemic-integrity check reads it: "tests pass" after tests_failed is a
//     contradiction);
//   - tests_failed, errors and warnings are annotated on the result in one line.
package quality

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/toolresult"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Limits of the finalizer.
const (
	MaxContent = 16000
	Head       = 6000
	Tail       = 8000
)

var (
	ansiRE   = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]`)
	blanksRE = regexp.MustCompile(`\n{3,}`)
)

// Clean applies the finalizer's rules to content.
func Clean(content string) string {
	s := ansiRE.ReplaceAllString(content, "")
	if strings.Contains(s, "\r") {
		lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
		for i, l := range lines {
			if j := strings.LastIndexByte(strings.TrimRight(l, "\r"), '\r'); j >= 0 {
				lines[i] = l[j+1:]
			}
		}
		s = strings.Join(lines, "\n")
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	s = blanksRE.ReplaceAllString(strings.Join(lines, "\n"), "\n\n")
	if r := []rune(s); len(r) > MaxContent {
		s = string(r[:Head]) + fmt.Sprintf("\n[... %d characters left out by response_finalizer ...]\n", len(r)-Head-Tail) + string(r[len(r)-Tail:])
	}
	return s
}

// Finalizer is the response finalizer.
type Finalizer struct{}

// Spec declares it.
func (e Finalizer) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "response_finalizer",
		Hooks:           []sdk.Hook{sdk.ToolExecuteAfter(e)},
		Order:           22,
		Description:     fmt.Sprintf("Cleans tool output for the model: terminal escapes, progress-bar rewrites, trailing spaces, blank runs; keeps head and tail of output over %d characters.", MaxContent),
		EffectsDeclared: true,
	}
}

// ToolExecuteAfter cleans the content.
func (Finalizer) ToolExecuteAfter(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	r := req.GetResult()
	if r.GetBreakLoop() {
		return nil, nil
	}
	if clean := Clean(r.GetContent()); clean != r.GetContent() {
		return &exocortexv1.ToolExecuteAfterResponse{Content: &clean}, nil
	}
	return nil, nil
}

func qualityKey() sdk.Key[*exocortexv1.CodeQuality] { return sdk.KeyOf[*exocortexv1.CodeQuality]() }

var (
	countRE    = regexp.MustCompile(`(\d+) (failed|passed|failures?)\b`)
	unittestRE = regexp.MustCompile(`failed \((?:failures|errors)=(\d+)`)
	jestRE     = regexp.MustCompile(`tests:\s+(\d+) failed`)
)

// Judge reads a code run's output. It scans the output line by line (the last
// 64 KiB; test summaries are at the end) with prefix checks, and runs a small
// pattern only on the lines that mention failed, passed or failures.
func Judge(tool string, r *exocortexv1.ToolResult) *exocortexv1.CodeQuality {
	out := r.GetContent() + "\n" + r.GetError()
	if len(out) > 64<<10 {
		out = out[len(out)-64<<10:]
	}
	q := &exocortexv1.CodeQuality{Tool: tool}
	seen := map[string]bool{}
	addFail := func(name string) {
		if !seen[name] {
			seen[name] = true
			q.FailingTests = append(q.FailingTests, name)
		}
	}
	failed := 0
	var pkgFails []string
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		low := strings.ToLower(t)
		switch {
		case strings.HasPrefix(t, "--- FAIL: "):
			if f := strings.Fields(t[len("--- FAIL: "):]); len(f) > 0 {
				addFail(f[0])
			}
		case strings.HasPrefix(line, "FAILED "):
			if f := strings.Fields(line); len(f) > 1 {
				addFail(f[1])
			}
		case strings.HasPrefix(line, "FAIL\t") || strings.HasPrefix(line, "FAIL "):
			if f := strings.Fields(line); len(f) > 1 {
				pkgFails = append(pkgFails, f[1])
			}
		case strings.HasPrefix(line, "ok  ") || strings.HasPrefix(line, "ok \t") || strings.HasPrefix(line, "ok\t"):
			q.TestsPassed++
		}
		if strings.Contains(low, "warning") {
			q.Warnings++
		}
		if strings.Contains(low, "failed") || strings.Contains(low, "passed") || strings.Contains(low, "failure") {
			for _, m := range countRE.FindAllStringSubmatch(low, -1) {
				n, _ := strconv.Atoi(m[1])
				if m[2] == "passed" {
					q.TestsPassed += int32(n)
				} else {
					failed = max(failed, n)
				}
			}
			for _, re := range []*regexp.Regexp{unittestRE, jestRE} {
				if m := re.FindStringSubmatch(low); m != nil {
					n, _ := strconv.Atoi(m[1])
					failed = max(failed, n)
				}
			}
		}
	}
	failed = max(failed, len(q.FailingTests))
	if len(pkgFails) > 0 {
		if len(q.FailingTests) == 0 {
			addFail(pkgFails[0])
		}
		failed = max(failed, 1)
	}
	if toolresult.Failed(r) {
		q.Errors = 1
	}
	switch {
	case failed > 0:
		q.Verdict = "tests_failed"
	case q.Errors > 0:
		q.Verdict = "errors"
	case q.Warnings > 0:
		q.Verdict = "warnings"
	case q.TestsPassed > 0:
		q.Verdict = "tests_passed"
	default:
		q.Verdict = "clean"
	}
	return q
}

// Gate is the code-quality gate.
type Gate struct{}

// Spec declares it.
func (e Gate) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "code_quality_gate",
		Hooks:       []sdk.Hook{sdk.ToolExecuteAfter(e)},
		Order:       27,
		Writes:      []sdk.KeyRef{qualityKey()},
		Description: "Judges code_execution output (failing and passing tests, warnings, errors) into code_quality and annotates problems.",
		// Only these tools run code whose output it judges.
		ForTools:        []string{"code_execution", "data_analyze"},
		EffectsDeclared: true,
	}
}

// ToolExecuteAfter judges a code run.
func (Gate) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	tool := req.GetToolCall().GetName()
	if tool != "code_execution" && tool != "data_analyze" {
		return nil, nil
	}
	q := Judge(tool, req.GetResult())
	q.Iteration = c.Context().GetIteration()
	qualityKey().Set(c, q)
	var note string
	switch q.Verdict {
	case "tests_failed":
		names := q.GetFailingTests()
		if len(names) > 5 {
			names = append(names[:5:5], "…")
		}
		note = "code_quality_gate: tests failed"
		if len(names) > 0 {
			note += " (" + strings.Join(names, ", ") + ")"
		}
		note += ": fix the code and run them again before answering."
	case "errors":
		note = "code_quality_gate: the run failed; read the error above before the next step."
	case "warnings":
		note = fmt.Sprintf("code_quality_gate: %d warning line(s) in the output; check they do not matter.", q.Warnings)
	default:
		return nil, nil
	}
	return &exocortexv1.ToolExecuteAfterResponse{Annotations: []string{note}}, nil
}
