package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Problem is one thing wrong with the configuration: where it is (the file
// and line, or the environment variable), the key as written in config.yaml,
// what is wrong and, for a misspelled key or value, the nearest right one.
type Problem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Env     string `json:"env,omitempty"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
	Suggest string `json:"did_you_mean,omitempty"`
}

func (p Problem) Error() string {
	var b strings.Builder
	switch {
	case p.Env != "":
		b.WriteString(p.Env + ": ")
	case p.File != "" && p.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", p.File, p.Line)
	case p.File != "":
		b.WriteString(p.File + ": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Message)
	if p.Suggest != "" {
		fmt.Fprintf(&b, " (did you mean %s?)", p.Suggest)
	}
	return b.String()
}

// Problems are every problem a configuration has, reported together. As an
// error it is one line each, then where to read about the keys.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, 0, len(ps)+1)
	for _, p := range ps {
		lines = append(lines, p.Error())
	}
	lines = append(lines, "(see `exocortex config --help`: `exocortex config keys` lists every key, `exocortex config check` every problem)")
	return strings.Join(lines, "\n")
}

// closest is the candidate nearest to s when it is near enough to be a
// misspelling of it ("" otherwise).
func closest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := levenshtein.ComputeDistance(strings.ToLower(s), strings.ToLower(c))
		// On a tie, a candidate the word begins ("of" is off, not on).
		if bestD < 0 || d < bestD || (d == bestD && strings.HasPrefix(c, s) && !strings.HasPrefix(best, s)) {
			best, bestD = c, d
		}
	}
	if bestD >= 0 && bestD <= max(2, len(s)/3) {
		return best
	}
	return ""
}

// sectionKeys are the keys a section of config.yaml holds.
func sectionKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if n := yamlName(t.Field(i)); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// suggestKey is the key meant by an unknown key name at prefix: a sibling
// spelled nearly the same, else a key of that name (or nearly) elsewhere.
func suggestKey(name, prefix string, t reflect.Type) string {
	siblings := sectionKeys(t)
	if s := closest(name, siblings); s != "" {
		return prefix + s
	}
	for _, s := range siblings {
		if strings.HasPrefix(s, name) {
			return prefix + s
		}
	}
	var paths, last []string
	for _, f := range fields(reflect.TypeFor[Config]()) {
		parts := strings.Split(f.path, ".")
		for i := range parts {
			// Every section and leaf, e.g. "timeouts" and "timeouts.tool".
			paths = append(paths, strings.Join(parts[:i+1], "."))
			last = append(last, parts[i])
		}
	}
	best := ""
	for i, l := range last {
		if l == name && (best == "" || len(paths[i]) < len(best)) {
			best = paths[i]
		}
	}
	if best != "" {
		return best
	}
	if s := closest(name, last); s != "" {
		i := slices.Index(last, s)
		return paths[i]
	}
	return ""
}

func sortedKeys(m reflect.Value) []string {
	out := make([]string, 0, m.Len())
	for _, k := range m.MapKeys() {
		out = append(out, k.String())
	}
	slices.Sort(out)
	return out
}
