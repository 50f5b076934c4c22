package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Origin says where a setting's value came from.
type Origin struct {
	// Kind is OriginDefault, OriginFile, OriginEnv or OriginFlag.
	Kind string `json:"kind"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Env  string `json:"env,omitempty"`
	Flag string `json:"flag,omitempty"`
}

// Origin kinds.
const (
	OriginDefault = "default"
	OriginFile    = "file"
	OriginEnv     = "env"
	OriginFlag    = "flag"
)

func (o Origin) String() string {
	switch o.Kind {
	case OriginFile:
		return fmt.Sprintf("%s:%d", o.File, o.Line)
	case OriginEnv:
		return "$" + o.Env
	case OriginFlag:
		return o.Flag
	}
	return OriginDefault
}

// Loaded is a configuration with where each of its values came from.
type Loaded struct {
	Config Config
	// Path is the configuration file (which may not exist).
	Path string
	// Origins maps a key (a map's entry as KEY.NAME) to where its value came
	// from; a key not in it has its default.
	Origins map[string]Origin
}

// Origin returns where key's value came from.
func (l *Loaded) Origin(key string) Origin {
	if o, ok := l.Origins[key]; ok {
		return o
	}
	return Origin{Kind: OriginDefault}
}

// SetFlag records that a command-line flag set key (the caller applies the
// value to Config itself, as flags are the commands' own).
func (l *Loaded) SetFlag(key, flag string) {
	l.Origins[key] = Origin{Kind: OriginFlag, Flag: flag}
}

// Inspect reads home's config.yaml over the defaults, then the environment
// (getenv, normally os.Getenv), and returns the configuration with the
// origin of each value and every problem found, all at once: tabs in the
// indentation, YAML errors, unknown keys (with the key probably meant),
// values of the wrong type, and values outside their key's rule (Validate).
// The configuration holds every value that could be read.
func Inspect(home string, getenv func(string) string) (*Loaded, Problems) {
	l := &Loaded{Config: Default(), Path: filepath.Join(home, FileName), Origins: map[string]Origin{}}
	var ps Problems
	add := func(p Problem) {
		if p.Env == "" && p.File == "" {
			p.File = l.Path
		}
		ps = append(ps, p)
	}
	b, err := os.ReadFile(l.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		add(Problem{Message: fmt.Sprintf("reading the file: %v", err)})
		return l, ps
	default:
		l.readFile(b, add)
	}
	if err := l.Config.applyEmbedModel(); err != nil {
		add(Problem{Line: l.Origin("embed_model").Line, Key: "embed_model", Message: err.Error()})
	}
	l.applyEnv(getenv, add)
	if l.Config.Provider == "" {
		l.Config.Provider = "ollama"
	}
	for _, p := range l.Config.validate() {
		switch o := l.Origin(p.Key); o.Kind {
		case OriginFile:
			p.Line = o.Line
		case OriginEnv:
			p.Env = o.Env
		}
		add(p)
	}
	// In the file's order, then the environment's.
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Env, b.Env), cmp.Compare(a.Line, b.Line))
	})
	return l, ps
}

// tabProblems names every line indented with a tab, which YAML forbids (the
// YAML library's own message gives no line when the first line has one).
func tabProblems(b []byte) []Problem {
	var out []Problem
	for i, line := range bytes.Split(b, []byte("\n")) {
		indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 {
			out = append(out, Problem{Line: i + 1, Message: "a tab indents this line; YAML indents with spaces only (replace the tab with spaces)"})
		}
	}
	return out
}

// yamlLine is how the YAML library places a syntax error ("yaml: line 3: ...").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxProblem is a YAML syntax error with its line in the Line field, so
// `config check --json` places it like the other problems.
func syntaxProblem(err error) Problem {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return Problem{Message: err.Error()}
	}
	n, _ := strconv.Atoi(m[1])
	return Problem{Line: n, Message: "not valid YAML: " + m[2]}
}

// readFile decodes the file's YAML into l.Config, checking each key against
// the declaration first, so every problem is found and named by its line.
func (l *Loaded) readFile(b []byte, add func(Problem)) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		// A tab in the indentation is the usual cause, and the library's
		// message neither says so nor, on the first line, gives the line.
		// (A tab inside a block of text is valid YAML: only a file that
		// does not parse has its tabs named.)
		if tabs := tabProblems(b); len(tabs) > 0 {
			for _, p := range tabs {
				add(p)
			}
			return
		}
		add(syntaxProblem(err))
		return
	}
	if len(doc.Content) == 0 {
		return // an empty file: no settings
	}
	root := doc.Content[0]
	if !l.checkSection(root, reflect.TypeFor[Config](), "", add) {
		return
	}
	// The keys and types were checked above, each problem named by its key;
	// what decodes lands in the configuration and the rest keeps its default.
	var te *yaml.TypeError
	if err := root.Decode(&l.Config); err != nil && !errors.As(err, &te) {
		add(Problem{Message: err.Error()})
	}
}

// checkSection checks a mapping against the struct t it fills, recording
// the line of each value. It reports false when n is not a mapping at all.
func (l *Loaded) checkSection(n *yaml.Node, t reflect.Type, prefix string, add func(Problem)) bool {
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return true
		}
		key := strings.TrimSuffix(prefix, ".")
		add(Problem{Line: n.Line, Key: key, Message: fmt.Sprintf("is %s; want a section of key: value lines", nodeKind(n))})
		return false
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		if first, dup := seen[k.Value]; dup {
			add(Problem{Line: k.Line, Key: key, Message: fmt.Sprintf("is set twice (first on line %d); keep one", first)})
		}
		seen[k.Value] = k.Line
		sf, ok := fieldByName(t, k.Value)
		if !ok {
			add(Problem{Line: k.Line, Key: key, Message: "is not a setting", Suggest: suggestKey(k.Value, prefix, t)})
			continue
		}
		switch {
		case section(sf.Type):
			l.checkSection(v, sf.Type, key+".", add)
		case sf.Type.Kind() == reflect.Map:
			if v.Kind != yaml.MappingNode {
				if v.Tag != "!!null" {
					add(Problem{Line: v.Line, Key: key, Message: fmt.Sprintf("is %s; want NAME: value lines", nodeKind(v))})
				}
				continue
			}
			l.Origins[key] = Origin{Kind: OriginFile, File: l.Path, Line: k.Line}
			for j := 0; j+1 < len(v.Content); j += 2 {
				ek, ev := v.Content[j], v.Content[j+1]
				if section(sf.Type.Elem()) {
					// NAME: {field: value} entries (secrets' sources) are
					// sections: a misspelt field is named like any key.
					l.checkSection(ev, sf.Type.Elem(), key+"."+ek.Value+".", add)
					continue
				}
				l.checkValue(ev, sf.Type.Elem(), key+"."+ek.Value, add)
			}
		default:
			l.checkValue(v, sf.Type, key, add)
		}
	}
	return true
}

// checkValue checks that v decodes as a t and records its line.
func (l *Loaded) checkValue(v *yaml.Node, t reflect.Type, key string, add func(Problem)) {
	l.Origins[key] = Origin{Kind: OriginFile, File: l.Path, Line: v.Line}
	if err := v.Decode(reflect.New(t).Interface()); err != nil {
		add(Problem{Line: v.Line, Key: key, Message: wrongType(v, t)})
	}
}

// wrongType says, in the file's terms, what a value is and what it should be.
func wrongType(v *yaml.Node, t reflect.Type) string {
	got := nodeKind(v)
	if v.Kind == yaml.ScalarNode {
		got = fmt.Sprintf("%q", v.Value)
	}
	return fmt.Sprintf("%s is not %s", got, want(t))
}

func want(t reflect.Type) string {
	switch {
	case t == durationType:
		return "a duration (write e.g. 10s, 2m or 1h30m)"
	case t.Kind() == reflect.Slice:
		return "a list (write [a, b] or one \"- item\" a line)"
	case t.Kind() == reflect.Map:
		return "a section of NAME: value lines"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "text (quote it if it looks like something else)"
	}
	return typeName(t)
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a section"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return fmt.Sprintf("%q", n.Value)
}

func fieldByName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if sf := t.Field(i); yamlName(sf) == name {
			return sf, true
		}
	}
	return reflect.StructField{}, false
}

// applyEnv applies every environment variable a key declares (its env tag),
// decoded as the file's value would be.
func (l *Loaded) applyEnv(getenv func(string) string, add func(Problem)) {
	v := reflect.ValueOf(&l.Config).Elem()
	for _, f := range fields(v.Type()) {
		env := f.sf.Tag.Get("env")
		if env == "" {
			continue
		}
		s := getenv(env)
		if s == "" {
			continue
		}
		n := &yaml.Node{Kind: yaml.ScalarNode, Value: s}
		dst := reflect.New(f.sf.Type)
		if err := n.Decode(dst.Interface()); err != nil {
			add(Problem{Env: env, Key: f.path, Message: fmt.Sprintf("%q is not %s", s, want(f.sf.Type))})
			continue
		}
		v.FieldByIndex(f.index).Set(dst.Elem())
		l.Origins[f.path] = Origin{Kind: OriginEnv, Env: env}
	}
}
