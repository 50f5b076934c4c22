package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// TestParseFixtures runs the parser over replies shaped like those local models
// send (prose around the JSON, code fences, trailing commas, Python dicts,
// truncation: the failures reported in Agent Zero issues #624, #776, #1234).
// The table pins the facts; the golden file next to each fixture pins the whole
// result, error text included (go test -update rewrites them).
func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file     string
		fault    Fault  // "" when the reply is usable
		line     int    // where the fault is, 0 to skip
		tool     string // expected ToolName
		args     string // expected ToolArgs, "" to skip
		thoughts int    // expected len(Thoughts), -1 to skip
		repairs  []string
	}{
		{file: "clean", tool: "code_execution", args: `{"runtime":"terminal","code":"find . -name '*.go' | wc -l"}`, thoughts: 2},
		{file: "prose_around", tool: "code_execution", args: `{"runtime":"terminal","code":"ls -la"}`, thoughts: 1,
			repairs: []string{"ignored text before the JSON object", "ignored text after the JSON object"}},
		{file: "fenced_json", tool: "memory_load", args: `{"query":"user name","limit":3}`, thoughts: 1,
			repairs: []string{"removed a Markdown code fence"}},
		{file: "fenced_with_prose", tool: "response", args: `{"text":"There are 42 Go files."}`, thoughts: 1,
			repairs: []string{"removed a Markdown code fence", "ignored text before the JSON object", "ignored text after the JSON object"}},
		{file: "trailing_commas", tool: "code_execution", args: `{"runtime":"terminal","code":"go build ./..."}`, thoughts: 2,
			repairs: []string{"removed a trailing comma"}},
		{file: "python_dict", tool: "memory_save", args: `{"text":"Favourite colour: blue","pinned":true,"area":null}`, thoughts: 2,
			repairs: []string{"turned single-quoted strings into double-quoted ones", "turned Python literals into JSON ones"}},
		{file: "tool_alias", tool: "response", args: `{}`, thoughts: 1, repairs: []string{`read "tool" as tool_name`}},
		{file: "truncated_mid_string", fault: FaultTruncated, line: 9},
		{file: "missing_closing_brace", tool: "response", args: `{"text":"The capital of Australia is Canberra."}`, thoughts: 1,
			repairs: []string{"added 1 missing closing bracket(s) at the end"}},
		{file: "plain_text", fault: FaultNoObject},
		{file: "whitespace_only", fault: FaultEmpty},
		{file: "missing_comma", fault: FaultInvalidJSON, line: 3},
		{file: "missing_tool_name", fault: FaultMissingToolName, line: 2},
		{file: "think_block", tool: "search_engine", args: `{"query":"weather in Lyon today"}`, thoughts: 1},
		{file: "unfinished_think", fault: FaultTruncated},
		{file: "raw_newlines_in_code", tool: "code_execution",
			args:     `{"runtime":"python","code":"primes = []\nfor n in range(2, 20):\n\tif all(n % p for p in primes):\n\t\tprimes.append(n)\nprint(primes)"}`,
			thoughts: 1, repairs: []string{"escaped a line break inside a string"}},
		{file: "unescaped_quotes", tool: "code_execution", args: `{"runtime":"python","code":"print(\"hello, world\")"}`, thoughts: 1,
			repairs: []string{"escaped a quote inside a string"}},
		{file: "unescaped_quotes_comma", tool: "code_execution", args: `{"runtime":"python","code":"name = \"Ada\"\nprint(\"hello\", name)"}`, thoughts: 1,
			repairs: []string{"escaped a quote inside a string"}},
		{file: "two_objects", tool: "code_execution", args: `{"runtime":"terminal","code":"ls"}`, thoughts: 1,
			repairs: []string{"ignored text after the JSON object"}},
		{file: "args_as_string", tool: "memory_save", args: `{"text":"The build needs Go 1.26","area":"main"}`, thoughts: 1,
			repairs: []string{"parsed tool_args from a JSON string"}},
		{file: "args_as_list", fault: FaultBadToolArgs, line: 1},
		{file: "braces_in_prose", tool: "response", args: `{"text":"Done."}`, thoughts: 1,
			repairs: []string{"ignored text before the JSON object"}},
		{file: "bare_keys", tool: "memory_load", args: `{"query":"definition of entropy"}`, thoughts: 1, repairs: []string{"quoted bare keys"}},
		{file: "json_in_strings", tool: "text_editor", args: `{"op":"write","path":"config.json","content":"{\"port\": 8080, \"tags\": [\"a\", \"}\"]}\n"}`, thoughts: 1},
		{file: "comments_and_stray_backslash", tool: "code_execution", args: `{"runtime":"terminal","code":"grep -n '\\.$' notes.txt"}`, thoughts: 1,
			repairs: []string{"removed a comment", "escaped a stray backslash inside a string"}},
		{file: "args_missing_null", tool: "response", args: `{}`, thoughts: 1},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.file+".txt"] = true
		t.Run(tc.file, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join("testdata", "replies", tc.file+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			req, err := ParseText(string(text))
			golden(t, filepath.Join("testdata", "replies", tc.file+".golden"), describe(req, err))
			if tc.fault != "" {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v, want a *ParseError with fault %s", err, tc.fault)
				}
				if pe.Fault != tc.fault {
					t.Errorf("fault = %s, want %s (%v)", pe.Fault, tc.fault, pe)
				}
				if tc.line != 0 && pe.Line != tc.line {
					t.Errorf("line = %d, want %d (%v)", pe.Line, tc.line, pe)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if req.ToolName != tc.tool {
				t.Errorf("tool = %q, want %q", req.ToolName, tc.tool)
			}
			if tc.args != "" && string(req.ToolArgs) != tc.args {
				t.Errorf("args = %s\nwant   %s", req.ToolArgs, tc.args)
			}
			if !json.Valid(req.ToolArgs) || req.ToolArgs[0] != '{' {
				t.Errorf("args %s are not a JSON object", req.ToolArgs)
			}
			if tc.thoughts >= 0 && len(req.Thoughts) != tc.thoughts {
				t.Errorf("%d thoughts, want %d: %q", len(req.Thoughts), tc.thoughts, req.Thoughts)
			}
			if !slices.Equal(req.Repairs, tc.repairs) && !(len(req.Repairs) == 0 && len(tc.repairs) == 0) {
				t.Errorf("repairs = %q\nwant      %q", req.Repairs, tc.repairs)
			}
			if req.Native {
				t.Error("Native set for a text reply")
			}
		})
	}
	entries, _ := os.ReadDir(filepath.Join("testdata", "replies"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".txt") && !seen[e.Name()] {
			t.Errorf("fixture %s has no row in the table", e.Name())
		}
	}
}

// describe renders a parse result as indented JSON for the golden files.
func describe(req ToolRequest, err error) []byte {
	var v any = req
	if err != nil {
		var pe *ParseError
		errors.As(err, &pe)
		v = struct {
			Error string
			*ParseError
		}{err.Error(), pe}
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return append(out, '\n')
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("result differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

func TestParseErrorOffsets(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		fault  Fault
		offset int
		line   int
		column int
	}{
		{"missing colon", `{"tool_name" "x"}`, FaultInvalidJSON, 13, 1, 14},
		{"bad value after prose", "Plan:\n{\"tool_name\": x}", FaultInvalidJSON, 20, 2, 15},
		{"unicode before", "é {\"tool_name\": @}", FaultInvalidJSON, 17, 1, 17},
		{"empty", "", FaultEmpty, -1, 0, 0},
		{"no object", "just words", FaultNoObject, -1, 0, 0},
		{"no tool name", "  {\"tool_args\": {}}", FaultMissingToolName, 2, 1, 3},
		{"tool name not a string", `{"tool_name": 7}`, FaultMissingToolName, 0, 1, 1},
		{"cut inside string", `{"tool_name": "resp`, FaultTruncated, 19, 1, 20},
		{"cut after key", `{"tool_name": "response", "tool_args":`, FaultTruncated, 38, 1, 39},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseText(tc.text)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v", err)
			}
			if pe.Fault != tc.fault || pe.Offset != tc.offset || pe.Line != tc.line || pe.Column != tc.column {
				t.Errorf("got %s offset %d line %d col %d, want %s offset %d line %d col %d (%v)",
					pe.Fault, pe.Offset, pe.Line, pe.Column, tc.fault, tc.offset, tc.line, tc.column, pe)
			}
		})
	}
}

func TestParseReply(t *testing.T) {
	jsonReply := `{"thoughts": ["t1"], "headline": "h", "tool_name": "from_text", "tool_args": {}}`
	tests := []struct {
		name     string
		reply    Reply
		fault    Fault
		tool     string
		args     string
		native   bool
		thoughts []string
		headline string
		repairs  []string
	}{
		{
			name:  "native wins over text",
			reply: Reply{Content: jsonReply, ToolCalls: []ToolCall{{ID: "c1", Name: "native_tool", Arguments: json.RawMessage(`{"b": 2, "a": 1}`)}}},
			tool:  "native_tool", args: `{"b":2,"a":1}`, native: true, thoughts: []string{"t1"}, headline: "h",
		},
		{
			name:  "native with prose and a second call",
			reply: Reply{Content: "Let me check the file.", ToolCalls: []ToolCall{{Name: "read"}, {Name: "write"}}},
			tool:  "read", args: `{}`, native: true, thoughts: []string{"Let me check the file."},
			repairs: []string{"used the first of 2 native tool calls"},
		},
		{name: "native without name", reply: Reply{ToolCalls: []ToolCall{{Arguments: json.RawMessage(`{}`)}}}, fault: FaultMissingToolName},
		{name: "native args not object", reply: Reply{ToolCalls: []ToolCall{{Name: "x", Arguments: json.RawMessage(`[1]`)}}}, fault: FaultBadToolArgs},
		{name: "text", reply: Reply{Content: jsonReply}, tool: "from_text", args: `{}`, thoughts: []string{"t1"}, headline: "h"},
		{name: "thinking only", reply: Reply{Thinking: "hmm, let me see"}, fault: FaultEmpty},
		{name: "thinking cut by the limit", reply: Reply{Thinking: "hmm, let me", DoneReason: "length"}, fault: FaultTruncated},
		{
			name:  "missing brace but cut by limit is not repaired",
			reply: Reply{Content: `{"tool_name": "response", "tool_args": {"text": "half"}`, DoneReason: "length"},
			fault: FaultTruncated,
		},
		{
			name:  "missing brace after a natural stop is repaired",
			reply: Reply{Content: `{"tool_name": "response", "tool_args": {"text": "whole"}`, DoneReason: "stop"},
			tool:  "response", args: `{"text":"whole"}`, repairs: []string{"added 1 missing closing bracket(s) at the end"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseReply(tc.reply)
			if tc.fault != "" {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Fault != tc.fault {
					t.Fatalf("err = %v, want fault %s", err, tc.fault)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.ToolName != tc.tool || string(req.ToolArgs) != tc.args || req.Native != tc.native ||
				!slices.Equal(req.Thoughts, tc.thoughts) || req.Headline != tc.headline || !slices.Equal(req.Repairs, tc.repairs) {
				t.Errorf("got %+v (args %s)", req, req.ToolArgs)
			}
		})
	}
	_, err := ParseReply(Reply{Content: `{"tool_name": "x", "tool_args": {"a": "b`, DoneReason: "length"})
	if err == nil || !strings.Contains(err.Error(), "num_predict") {
		t.Errorf("a reply cut by the length limit should say how to raise it: %v", err)
	}
}

// TestParseNeverPanics feeds prefixes of every fixture: each cut is a reply a
// model could send when stopped early.
func TestParseNeverPanics(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "replies", "*.txt"))
	for _, f := range files {
		text, _ := os.ReadFile(f)
		for i := 0; i <= len(text); i++ {
			req, err := ParseText(string(text[:i]))
			if err == nil && (req.ToolName == "" || !json.Valid(req.ToolArgs)) {
				t.Fatalf("%s[:%d]: success with tool %q args %s", f, i, req.ToolName, req.ToolArgs)
			}
			var pe *ParseError
			if err != nil && !errors.As(err, &pe) {
				t.Fatalf("%s[:%d]: error is not a *ParseError: %v", f, i, err)
			}
		}
	}
}

func FuzzParseText(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "replies", "*.txt"))
	for _, file := range files {
		text, _ := os.ReadFile(file)
		f.Add(string(text))
	}
	f.Fuzz(func(t *testing.T, text string) {
		req, err := ParseText(text)
		if err == nil && (req.ToolName == "" || !json.Valid(req.ToolArgs)) {
			t.Fatalf("success with tool %q args %s", req.ToolName, req.ToolArgs)
		}
		var pe *ParseError
		if err != nil && (!errors.As(err, &pe) || pe.Offset > len(text)) {
			t.Fatalf("bad error %v", err)
		}
	})
}
