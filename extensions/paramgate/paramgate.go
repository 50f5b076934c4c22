// Package paramgate is the meta-reasoning gate: deterministic correction of the
// arguments a model gives a tool, against the tool's declared JSON Schema, before
// the tool runs. Small models get argument names and types slightly wrong; a
// correction here saves a failed call and a retry.
//
// Meta-reasoning gate (tool_execute_before, order 20, as in the seed). With the
// tool's schema from tool_catalog (recorded at system_prompt in the same
// iteration), in this order:
//  1. a declared argument that is missing is taken from an undeclared one with
//     the same name up to case, "_" and "-" (filePath for file_path), or from a
//     synonym in the same group of Synonyms (file for path, cmd for code, ...);
//  2. values are converted to the declared type when the conversion is exact:
//     "3" to 3 for integer and number, "true"/"yes"/"1" to true for boolean, a
//     number or boolean to its text for string, "a, b" to ["a", "b"] and a single
//     value to a one-element list for array, a JSON object in a string to the
//     object for object;
//  3. a string outside its enum that matches an enum value up to case becomes
//     that value;
//  4. a string argument wrapped in a Markdown code fence (```python … ```) loses
//     the fence.
//
// Nothing is guessed beyond these rules: an argument that fits none is left for
// the tool to report. When anything changed, the call runs with the corrected
// arguments and the corrections are logged.
package paramgate

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Synonyms are groups of argument names models use for the same thing.
func Synonyms() [][]string {
	return [][]string{
		{"path", "file", "file_path", "filepath", "filename", "file_name"},
		{"code", "command", "cmd", "script", "source"},
		{"query", "q", "search", "search_query", "question"},
		{"text", "message", "content", "body", "answer", "response"},
		{"runtime", "language", "lang"},
		{"url", "link", "href", "uri"},
		{"old_text", "old", "old_str", "search_text", "find"},
		{"new_text", "new", "new_str", "replace", "replacement"},
		{"action", "op", "operation", "mode"},
	}
}

type schema struct {
	Properties map[string]struct {
		Type  any   `json:"type"`
		Enum  []any `json:"enum"`
		Items *struct {
			Type any `json:"type"`
		} `json:"items"`
	} `json:"properties"`
	Required []string `json:"required"`
}

func norm(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
}

func typeOf(t any) string {
	switch x := t.(type) {
	case string:
		return x
	case []any: // ["string", "null"]
		for _, e := range x {
			if s, ok := e.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

var fenceRE = regexp.MustCompile("(?s)^\\s*```[\\w+-]*[ \\t]*\\n(.*?)\\n?```\\s*$")

// Correct applies the rules; it returns the corrected arguments and what changed
// (nil when nothing did).
func Correct(argsJSON, schemaJSON string) (string, []string) {
	var args map[string]any
	var sc schema
	if json.Unmarshal([]byte(argsJSON), &args) != nil || args == nil || json.Unmarshal([]byte(schemaJSON), &sc) != nil || len(sc.Properties) == 0 {
		return argsJSON, nil
	}
	var fixes []string
	declared := sc.Properties
	names := make([]string, 0, len(declared))
	for n := range declared {
		names = append(names, n)
	}
	sort.Strings(names)
	// 1. names
	for _, p := range names {
		if _, ok := args[p]; ok {
			continue
		}
		var from string
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, isDeclared := declared[k]; isDeclared {
				continue
			}
			if norm(k) == norm(p) {
				from = k
				break
			}
		}
		if from == "" {
			for _, group := range Synonyms() {
				if !contains(group, p) {
					continue
				}
				for _, k := range keys {
					if _, isDeclared := declared[k]; !isDeclared && contains(group, strings.ToLower(k)) {
						from = k
						break
					}
				}
			}
		}
		if from != "" {
			args[p] = args[from]
			delete(args, from)
			fixes = append(fixes, fmt.Sprintf("renamed %q to %q", from, p))
		}
	}
	// 2-4. values
	for _, p := range names {
		v, ok := args[p]
		if !ok || v == nil {
			continue
		}
		prop := declared[p]
		nv, fix := convert(v, typeOf(prop.Type), prop.Items != nil && typeOf(prop.Items.Type) != "" && typeOf(prop.Items.Type) != "string")
		if fix != "" {
			args[p] = nv
			fixes = append(fixes, p+": "+fix)
			v = nv
		}
		if s, ok := v.(string); ok && len(prop.Enum) > 0 {
			inEnum := false
			for _, e := range prop.Enum {
				if e == s {
					inEnum = true
				}
			}
			if !inEnum {
				for _, e := range prop.Enum {
					if es, ok := e.(string); ok && strings.EqualFold(strings.TrimSpace(s), es) {
						args[p] = es
						fixes = append(fixes, fmt.Sprintf("%s: %q to enum value %q", p, s, es))
					}
				}
			}
		}
		if s, ok := args[p].(string); ok {
			if m := fenceRE.FindStringSubmatch(s); m != nil {
				args[p] = m[1]
				fixes = append(fixes, p+": removed the code fence")
			}
		}
	}
	if len(fixes) == 0 {
		return argsJSON, nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return argsJSON, nil
	}
	return string(b), fixes
}

// convert returns v in type t and what it did, or "" when it leaves v.
func convert(v any, t string, typedItems bool) (any, string) {
	switch t {
	case "integer", "number":
		if s, ok := v.(string); ok {
			s = strings.TrimSpace(s)
			if t == "integer" {
				if n, err := strconv.ParseInt(s, 10, 64); err == nil {
					return n, fmt.Sprintf("%q to %d", s, n)
				}
			} else if f, err := strconv.ParseFloat(s, 64); err == nil {
				return f, fmt.Sprintf("%q to %v", s, f)
			}
		}
	case "boolean":
		if s, ok := v.(string); ok {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true", "yes", "1", "on":
				return true, fmt.Sprintf("%q to true", s)
			case "false", "no", "0", "off":
				return false, fmt.Sprintf("%q to false", s)
			}
		}
	case "string":
		switch x := v.(type) {
		case float64:
			s := strconv.FormatFloat(x, 'f', -1, 64)
			return s, fmt.Sprintf("%v to %q", x, s)
		case bool:
			return strconv.FormatBool(x), fmt.Sprintf("%v to %q", x, strconv.FormatBool(x))
		}
	case "array":
		switch x := v.(type) {
		case []any:
		case string:
			if typedItems {
				return v, ""
			}
			if strings.HasPrefix(strings.TrimSpace(x), "[") {
				var arr []any
				if json.Unmarshal([]byte(x), &arr) == nil {
					return arr, "parsed the list given as a string"
				}
			}
			var out []any
			for _, part := range strings.Split(x, ",") {
				if part = strings.TrimSpace(part); part != "" {
					out = append(out, part)
				}
			}
			return out, fmt.Sprintf("split %q into a list", x)
		default:
			return []any{x}, "wrapped the single value in a list"
		}
	case "object":
		if s, ok := v.(string); ok && strings.HasPrefix(strings.TrimSpace(s), "{") {
			var obj map[string]any
			if json.Unmarshal([]byte(s), &obj) == nil {
				return obj, "parsed the object given as a string"
			}
		}
	}
	return v, ""
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func catalogKey() sdk.Key[*exocortexv1.ToolCatalog] { return sdk.KeyOf[*exocortexv1.ToolCatalog]() }

// Gate is the meta-reasoning gate.
type Gate struct{}

// Spec declares it.
func (e Gate) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "meta_reasoning_gate",
		Hooks:           []sdk.Hook{sdk.ToolExecuteBefore(e)},
		Order:           20,
		Reads:           []sdk.KeyRef{catalogKey()},
		Description:     "Corrects tool arguments against the tool's schema: names (case, synonyms), exact type conversions, enum case, code fences.",
		EffectsDeclared: true,
		// A corrector, not a guard: when it fails the call goes ahead with its
		// arguments as the model wrote them.
		FailOpen: true,
	}
}

// ToolExecuteBefore corrects the arguments.
func (Gate) ToolExecuteBefore(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	cat, ok := catalogKey().Get(c)
	if !ok {
		return nil, nil
	}
	tc := req.GetToolCall()
	for _, t := range cat.GetTools() {
		if t.GetName() != tc.GetName() {
			continue
		}
		fixed, fixes := Correct(tc.GetArgsJson(), t.GetParametersJsonSchema())
		if len(fixes) == 0 {
			return nil, nil
		}
		c.Logger().Info("corrected tool arguments", "tool", tc.GetName(), "fixes", fixes)
		return &exocortexv1.ToolExecuteBeforeResponse{ArgsJson: &fixed}, nil
	}
	return nil, nil
}
