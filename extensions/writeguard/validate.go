package writeguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// MaxValidateBytes bounds the files read back.
const MaxValidateBytes = 2 << 20

var placeholderRE = regexp.MustCompile(`(?im)^\s*(?://|#|/\*|<!--|--)?\s*(?:\.\.\.|…)\s*(?:\(?\s*)?(?:rest|remaining|existing|more|other|previous|unchanged)\b.*$|\b(?:rest of (?:the )?(?:code|file|function|implementation)(?: (?:remains|is) (?:the same|unchanged))?|remaining code (?:unchanged|here)|code continues|truncated for brevity|\[truncated\]|same as before)\b`)

// Validate checks a written file; sent is the content the write asked for
// (checked against the file when write is true). It returns the problem, or "".
func Validate(path, sent string, write bool) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "the file cannot be read back: " + err.Error()
	}
	if fi.Size() > MaxValidateBytes {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "the file cannot be read back: " + err.Error()
	}
	if write && int64(len(sent)) > fi.Size() {
		return fmt.Sprintf("truncated: the file has %d bytes, the write sent %d", fi.Size(), len(sent))
	}
	text := string(b)
	if m := placeholderRE.FindString(text); m != "" {
		return fmt.Sprintf("possible truncation: a placeholder stands where content was left out (%q)", strings.TrimSpace(m))
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".go":
		if _, err := parser.ParseFile(token.NewFileSet(), path, b, parser.SkipObjectResolution); err != nil {
			return syntaxProblem("Go", err.Error())
		}
		return ""
	case ".json":
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&v); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return syntaxProblem("JSON", fmt.Sprintf("line %d: %v", lineOf(b, se.Offset), err))
			}
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return "truncated: the JSON ends before its value is complete"
			}
			return syntaxProblem("JSON", err.Error())
		}
		return ""
	case ".yaml", ".yml":
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var v any
			err := dec.Decode(&v)
			if errors.Is(err, io.EOF) {
				return ""
			}
			if err != nil {
				return syntaxProblem("YAML", err.Error())
			}
		}
	case ".py":
		return pythonProblem(path)
	case ".js", ".ts", ".java", ".c", ".h", ".cc", ".cpp", ".rs", ".cs", ".kt", ".swift":
		if open := unclosed(text); open != "" {
			return "possible truncation: " + open
		}
	}
	return ""
}

func syntaxProblem(lang, msg string) string {
	low := strings.ToLower(msg)
	if strings.Contains(low, "eof") || strings.Contains(low, "was never closed") || strings.Contains(low, "unexpected end") {
		return fmt.Sprintf("truncated: the %s ends in the middle (%s)", lang, msg)
	}
	return fmt.Sprintf("%s syntax error: %s", lang, msg)
}

func lineOf(b []byte, off int64) int {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	return bytes.Count(b[:off], []byte("\n")) + 1
}

// pythonProblem asks python3's ast module to parse the file.
func pythonProblem(path string) string {
	py, err := exec.LookPath("python3")
	if err != nil {
		return ""
	}
	// python3 starts in about a second on a loaded 2-core machine; the bound
	// is for a wedged interpreter, not a slow one (an interpreter that runs
	// out of it leaves the file unchecked, as without python3).
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", "import ast,sys\nsrc=open(sys.argv[1],encoding='utf-8',errors='replace').read()\ntry:\n ast.parse(src,sys.argv[1])\nexcept SyntaxError as e:\n print('line %s: %s' % (e.lineno, e.msg)); sys.exit(3)", path)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		return syntaxProblem("Python", strings.TrimSpace(string(out)))
	}
	return ""
}

// unclosed reports brackets opened and never closed, outside strings and
// comments (a rough scan for C-like languages).
func unclosed(text string) string {
	var stack []rune
	inStr := rune(0)
	for i := 0; i < len(text); i++ {
		ch := rune(text[i])
		switch {
		case inStr != 0:
			if ch == '\\' {
				i++
			} else if ch == inStr {
				inStr = 0
			}
		case ch == '"' || ch == '\'' || ch == '`':
			inStr = ch
		case ch == '/' && i+1 < len(text) && text[i+1] == '/':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case ch == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return "a comment is never closed"
			}
			i += end + 3
		case ch == '{' || ch == '(' || ch == '[':
			stack = append(stack, ch)
		case ch == '}' || ch == ')' || ch == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) > 0 {
		return fmt.Sprintf("%d bracket(s) opened and never closed (the last is %q)", len(stack), string(stack[len(stack)-1]))
	}
	return ""
}
